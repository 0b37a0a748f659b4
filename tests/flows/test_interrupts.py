"""Ctrl-C and SIGTERM on `refill backfill`, as a user's terminal sends them.

The first signal stops at a safe point: the chunk in flight commits or rolls back whole, no
chunk starts after it, the run log says `interrupted`, the summary prints once, exit 130.
A second one ends the command at once, in one line, and the run reads as dead, not running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from refill.sample_data import DaySpec, write_day
from refill.settings import PACKAGE_PROJECT_DIR
from refill.warehouse import run_liveness
from tests.helpers import expected_day

FIRST = date(2026, 1, 1)
DAYS = [FIRST + timedelta(days=n) for n in range(5)]


def _start_backfill(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    landing = tmp_path / "landing"
    for day in DAYS:
        write_day(landing, day, DaySpec(payments=400))
    warehouse = tmp_path / "warehouse" / "refill.duckdb"
    environment = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    environment.update(REFILL_LANDING=str(landing), REFILL_WAREHOUSE=str(warehouse))
    child = subprocess.Popen(
        [sys.executable, "-m", "refill", "backfill", "--start", str(DAYS[0]), "--end"]
        + [str(DAYS[-1]), "--chunk-days", "1", "--order", "oldest-first", "--retries", "1"],
        cwd=PACKAGE_PROJECT_DIR,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return child, warehouse


def _read_until(child: subprocess.Popen, marker: str, timeout: float = 240) -> list[str]:
    """The child's output up to the first line holding `marker`."""
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    for line in child.stdout:
        lines.append(line)
        if marker in line:
            return lines
        assert time.monotonic() < deadline, "".join(lines)
    raise AssertionError("the backfill ended before its first chunk:\n" + "".join(lines))


def _run_log(warehouse: Path) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return connection.execute("select run_id, outcome from ops.run_log").fetchall()


def _published_days(warehouse: Path) -> dict[date, int]:
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        rows = connection.execute(
            "select partition_date, rows_written from ops.partition_ledger "
            "where model_name = 'fct_payments' and status = 'published'"
        ).fetchall()
        facts = dict(
            connection.execute(
                "select event_date, count(*) from main.fct_payments group by 1"
            ).fetchall()
        )
    ledger = dict(rows)
    assert ledger == {day: count for day, count in facts.items()}, "ledger and facts disagree"
    return ledger


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_the_first_signal_stops_the_backfill_at_a_safe_point(tmp_path, signum):
    # GIVEN a backfill of five one-day chunks, oldest first
    child, warehouse = _start_backfill(tmp_path)
    # WHEN the signal arrives while the second chunk's dbt build runs
    before = _read_until(child, f"chunk {DAYS[1]}: building")
    child.send_signal(signum)
    rest, _ = child.communicate(timeout=240)
    output = "".join(before) + rest

    # THEN the command exits 130 and prints its summary once
    assert child.returncode == 130, output
    summary = [line for line in output.splitlines() if line.startswith("refill: backfill")]
    assert len(summary) == 1, output
    assert "interrupted by " + signal.Signals(signum).name in summary[0]
    assert "Traceback" not in output
    # the flow run ends Cancelled, and the run log closes the run as interrupted
    assert "Finished in state Cancelled(" in output
    [(run_id, outcome)] = _run_log(warehouse)
    assert outcome == "interrupted"
    assert not run_liveness.is_alive(warehouse, run_id)
    # the chunk in flight committed whole, and no chunk started after the signal
    published = _published_days(warehouse)
    assert sorted(published) == DAYS[:2]
    # and what stands is exactly what the landing says
    for day, rows in published.items():
        assert rows == expected_day(tmp_path / "landing", day).published


@pytest.mark.slow
def test_a_second_ctrl_c_ends_at_once_and_the_run_reads_as_dead(tmp_path):
    # GIVEN a backfill building its second chunk
    child, warehouse = _start_backfill(tmp_path)
    before = _read_until(child, f"chunk {DAYS[1]}: building")
    # WHEN Ctrl-C comes twice
    child.send_signal(signal.SIGINT)
    time.sleep(0.3)
    child.send_signal(signal.SIGINT)
    clock = time.monotonic()
    rest, _ = child.communicate(timeout=60)
    output = "".join(before) + rest

    # THEN the command ends at once, with one line and no traceback
    assert time.monotonic() - clock < 10, output
    assert child.returncode == 130, output
    assert "again: stopped at once" in rest
    assert "Traceback" not in rest
    # and the next command sees a run that is not alive (a dead `running` row, or closed)
    [(run_id, outcome)] = _run_log(warehouse)
    assert outcome in ("running", "interrupted")
    assert not run_liveness.is_alive(warehouse, run_id)
    _published_days(warehouse)  # ledger and facts agree: the cut-off chunk left nothing


@pytest.mark.slow
def test_a_temporary_server_lost_during_a_run_comes_back_and_the_run_completes(tmp_path):
    import psutil

    # GIVEN a backfill building its second chunk
    child, warehouse = _start_backfill(tmp_path)
    before = _read_until(child, f"chunk {DAYS[1]}: building")
    # WHEN its temporary Prefect server is killed
    [server] = [
        p for p in psutil.Process(child.pid).children() if "prefect_server" in p.cmdline()[2]
    ]
    server.kill()
    rest, _ = child.communicate(timeout=240)
    output = "".join(before) + rest

    # THEN the server comes back, once, and the run completes: every day, no traceback
    assert child.returncode == 0, output
    assert rest.count("restarting it on the same port") == 1
    assert "Traceback" not in rest
    assert sorted(_published_days(warehouse)) == DAYS
    [(_, outcome)] = _run_log(warehouse)
    assert outcome == "succeeded"


@pytest.mark.slow
def test_ctrl_c_ends_a_daily_run_waiting_for_its_file_at_once(tmp_path):
    # GIVEN a daily run waiting for a day whose file has not landed
    landing = tmp_path / "landing"
    landing.mkdir()
    warehouse = tmp_path / "warehouse" / "refill.duckdb"
    environment = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    environment.update(REFILL_LANDING=str(landing), REFILL_WAREHOUSE=str(warehouse))
    child = subprocess.Popen(
        [sys.executable, "-m", "refill", "daily", "--date", str(FIRST), "--wait", "600"]
        + ["--poll", "1", "--retries", "1"],
        cwd=PACKAGE_PROJECT_DIR,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    before = _read_until(child, "checking again")
    # WHEN Ctrl-C comes once
    child.send_signal(signal.SIGINT)
    clock = time.monotonic()
    rest, _ = child.communicate(timeout=120)
    output = "".join(before) + rest

    # THEN the wait ends at once, the run log says interrupted, nothing was written
    assert time.monotonic() - clock < 60, output
    assert child.returncode == 130, output
    assert f"refill: daily {FIRST}: interrupted by SIGINT" in rest
    assert "Traceback" not in rest
    [(_, outcome)] = _run_log(warehouse)
    assert outcome == "interrupted"
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        ledger = connection.execute("select count(*) from ops.partition_ledger").fetchone()
    assert ledger == (0,)


def test_a_run_is_alive_while_its_process_holds_its_lock_and_dead_once_killed(tmp_path):
    # GIVEN a run whose process holds its liveness lock
    warehouse = tmp_path / "refill.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; from pathlib import Path; from refill.warehouse import run_liveness; "
            f"run_liveness.hold(Path({str(warehouse)!r}), 'run-1'); "
            "print('held', flush=True); time.sleep(600)",
        ],
        cwd=PACKAGE_PROJECT_DIR,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        # THEN it is alive, and a run that never started is not
        assert run_liveness.is_alive(warehouse, "run-1")
        assert not run_liveness.is_alive(warehouse, "run-2")
        # WHEN its process is killed, THEN it is dead (the OS released the lock)
        holder.kill()
        holder.wait()
        assert not run_liveness.is_alive(warehouse, "run-1")
    finally:
        holder.kill()
        holder.wait()


def test_a_sigterm_while_prefect_starts_or_ends_the_run_stops_at_a_safe_point():
    # GIVEN the command line's handlers armed (harness seed 2080: a SIGTERM 1.2 s into a
    # backfill met Prefect's own SIGTERM bridge, which crashed the run: exit 1, not 130)
    from prefect.utilities import engine

    from flows import signals
    from refill import interrupts

    signals.arm()
    try:
        # WHEN Prefect's bridge, as its flow engine installs it around a run, gets SIGTERM
        engine._prefect_sigterm_handler(signal.SIGTERM, None)

        # THEN it is refill's first signal: no TerminationSignal, a stop at the next safe point
        assert interrupts.requested()
        with pytest.raises(interrupts.Interrupted, match="SIGTERM"):
            interrupts.raise_if_requested("before chunk 1")
    finally:
        interrupts.disarm()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_start_up_ends_the_command_at_once_with_130(tmp_path, signum):
    # GIVEN a command still starting (Python importing Prefect, before any run began)
    # (harness seeds 2135 and 2172: it died of the signal itself, exit -15 / -2)
    environment = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    environment.update(
        REFILL_LANDING=str(tmp_path / "landing"),
        REFILL_WAREHOUSE=str(tmp_path / "warehouse" / "refill.duckdb"),
    )
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "refill",
            "backfill",
            "--start",
            "2026-01-01",
            "--end",
            "2026-01-02",
        ],
        cwd=PACKAGE_PROJECT_DIR,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    time.sleep(0.5)

    # WHEN the signal comes
    child.send_signal(signum)
    output, _ = child.communicate(timeout=60)

    # THEN it ends with 130 and one line, no traceback, nothing created
    assert child.returncode == 130, output
    assert f"refill: {signal.Signals(signum).name} before the run started" in output
    assert "Traceback" not in output
    assert not (tmp_path / "warehouse").exists()


def test_a_signal_after_the_command_ended_exits_with_the_commands_own_status():
    # GIVEN the `refill` program whose command has ended (here with a usage error, exit 2)
    # and whose process is still tearing down (harness seeds 1023 and 2135: a SIGTERM
    # there ended a finished backfill with the signal's own status, -15)
    script = (
        "import os, signal, time\n"
        "from refill import cli\n"
        "status = cli.main(['backfill', '--start', '2026-01-02', '--end', '2026-01-01'],"
        " as_program=True)\n"
        "print('ended', status, flush=True)\n"
        # WHEN the signal lands during the teardown
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "time.sleep(30)\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PACKAGE_PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )

    # THEN the process exits with the command's status, not the signal's
    assert "ended 2" in child.stdout, child.stdout + child.stderr
    assert child.returncode == 2, child.stdout + child.stderr


def test_a_signal_during_pythons_teardown_exits_with_the_commands_own_status():
    # GIVEN the `refill` program whose command has ended (a usage error, exit 2), and an
    # object that closes slowly when Python clears its modules (as DuckDB's and dbt's do),
    # where Python has already put the default signal handlers back (harness seed 1023)
    script = (
        "import os, signal, sys, time\n"
        "from refill import cli\n"
        "class ClosesSlowly:\n"
        "    def __del__(self):\n"
        # WHEN the signal lands while it closes
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        time.sleep(2)\n"
        "held = ClosesSlowly()\n"
        "sys.argv = ['refill', 'backfill', '--start', '2026-01-02', '--end', '2026-01-01']\n"
        "cli.program()\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PACKAGE_PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )

    # THEN the process exits with the command's status, not the signal's
    assert "--end 2026-01-01 is before --start 2026-01-02" in child.stderr
    assert child.returncode == 2, child.stdout + child.stderr


def _server_processes_of(parent_pid: int) -> list[int]:
    """The temporary Prefect servers a `refill` process launched (their command line holds
    the parent's pid: `-m flows.prefect_server PARENT PORT`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"flows.prefect_server" in words and str(parent_pid).encode() in words:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from /proc")
def test_a_signal_after_the_server_launched_and_before_the_run_stops_the_server(tmp_path):
    # GIVEN a command whose temporary server was launched (before its heavy imports), the
    # command still importing, its safe-point handlers not yet armed
    environment = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    environment.update(
        REFILL_LANDING=str(tmp_path / "landing"),
        REFILL_WAREHOUSE=str(tmp_path / "warehouse" / "refill.duckdb"),
    )
    child = subprocess.Popen(
        [sys.executable, "-m", "refill", "daily", "--date", "2026-01-01"],
        cwd=PACKAGE_PROJECT_DIR,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not _server_processes_of(child.pid):
        assert child.poll() is None and time.monotonic() < deadline, "no server launched"
        time.sleep(0.05)

    # WHEN the signal comes
    child.send_signal(signal.SIGTERM)
    output, _ = child.communicate(timeout=60)

    # THEN the command ends with 130 before the run, and its server is already gone (not
    # left to notice its parent's exit a second later)
    assert child.returncode == 130, output
    assert "refill: SIGTERM before the run started" in output
    assert _server_processes_of(child.pid) == []


def _start_refill(tmp_path: Path, *arguments: str, land: bool = False) -> subprocess.Popen:
    """`refill backfill` of the five days in one-day chunks, oldest first, with `arguments`,
    on the landing and warehouse under tmp_path (`land`: the five days landed first)."""
    for day in DAYS if land else ():
        write_day(tmp_path / "landing", day, DaySpec(payments=400))
    environment = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    environment.update(
        REFILL_LANDING=str(tmp_path / "landing"),
        REFILL_WAREHOUSE=str(tmp_path / "warehouse" / "refill.duckdb"),
        REFILL_PREVIEWS=str(tmp_path / "reports"),
    )
    return subprocess.Popen(
        [sys.executable, "-m", "refill", "backfill", "--start", str(DAYS[0]), "--end"]
        + [str(DAYS[-1]), "--chunk-days", "1", "--order", "oldest-first", "--retries", "1"]
        + list(arguments),
        cwd=PACKAGE_PROJECT_DIR,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _previews(warehouse: Path) -> tuple[list[tuple], list[tuple]]:
    """The recorded previews, and the tables of schema `preview`."""
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        tables = connection.execute(
            "select table_name from information_schema.tables where table_schema = 'preview'"
        ).fetchall()
        has_records = connection.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'ops' and table_name = 'refill_previews'"
        ).fetchone()[0]
        records = (
            connection.execute("select preview_id from ops.refill_previews").fetchall()
            if has_records
            else []
        )
    return records, tables


@pytest.mark.slow
def test_ctrl_c_stops_a_preview_between_chunks(tmp_path):
    # GIVEN a preview of five one-day chunks (the days landed, none published)
    child = _start_refill(tmp_path, "--preview", land=True)
    warehouse = tmp_path / "warehouse" / "refill.duckdb"
    # WHEN Ctrl-C comes while its second chunk builds
    before = _read_until(child, f"chunk {DAYS[1]}")
    child.send_signal(signal.SIGINT)
    rest, _ = child.communicate(timeout=240)
    output = "".join(before) + rest

    # THEN it stops there: exit 130, one summary line, no traceback, the run interrupted
    assert child.returncode == 130, output
    assert "interrupted by SIGINT" in rest and "Traceback" not in output
    runs = _run_log(warehouse)
    assert [outcome for _, outcome in runs] == ["interrupted"], output
    # and no chunk after it was kept: the preview is dropped whole, nothing published
    assert _previews(warehouse) == ([], [])
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        assert connection.execute("select count(*) from ops.partition_ledger").fetchone() == (0,)


@pytest.mark.slow
def test_ctrl_c_stops_a_publish_from_a_preview_between_chunks_and_it_resumes(tmp_path):
    # GIVEN a preview of five one-day chunks
    made = _start_refill(tmp_path, "--preview", land=True)
    made_output, _ = made.communicate(timeout=400)
    assert made.returncode == 0, made_output
    warehouse = tmp_path / "warehouse" / "refill.duckdb"
    [(preview_id,)], _ = _previews(warehouse)

    # WHEN its publish gets Ctrl-C once its second chunk is published
    publishing = ["--restate", "--yes", "--from-preview", preview_id]
    child = _start_refill(tmp_path, *publishing)
    before = _read_until(child, f"chunk {DAYS[1]} published")
    child.send_signal(signal.SIGINT)
    rest, _ = child.communicate(timeout=240)
    output = "".join(before) + rest

    # THEN it stops between chunks: exit 130, the run interrupted, the first chunks stand
    assert child.returncode == 130, output
    assert "interrupted by SIGINT" in rest and "Traceback" not in output
    assert [outcome for _, outcome in _run_log(warehouse)] == ["succeeded", "interrupted"]
    published = sorted(_published_days(warehouse))
    assert published == DAYS[: len(published)] and len(published) >= 2
    assert len(published) < len(DAYS), output

    # AND the same command again publishes the rest of the preview
    again = _start_refill(tmp_path, *publishing)
    again_output, _ = again.communicate(timeout=400)
    assert again.returncode == 0, again_output
    published = _published_days(warehouse)
    assert sorted(published) == DAYS
    for day, rows in published.items():
        assert rows == expected_day(tmp_path / "landing", day).published
    assert _previews(warehouse) == ([], [])
