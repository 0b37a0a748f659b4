"""`refill ci` end to end on a clone of the project: a base branch (the project as it is)
and branches that change it. The report names exactly the days and markets a changed mart
moves (the oracle reads the landing, without refill's code), a change that moves no number
says so, a change whose tests fail and a ref that names nothing are refused in one line.

It is a trust boundary: a change that also edits what its own YAML declares (the measures,
the facts' totals) still has every moved number reported; a column no YAML declares, a
number or any other value, is compared too; uncommitted changes are named as such; a
change that fixes a broken base passes, its report saying the base did not build; one run
per checkout at a time, and a run killed with SIGKILL leaves nothing the next one trips on.

Each run builds the base and the change on the default sample window (three days of the
generated sample landing): 20-25 s a run on a quiet machine, about a minute under load."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import psutil
import pytest

from refill.cli.ci import SAMPLE_DAYS, SAMPLE_START, WORK_FOLDER
from tests.helpers import (
    ARMED_FAULT_POINT,
    FX_SEED,
    PROJECT_PARTS,
    DayTruth,
    expected_day,
    fx_rates_of,
)

REFILL = Path(sys.executable).with_name("refill")
PROJECT = Path(__file__).resolve().parents[2]
V2 = Path("models/marts/revenue/fct_daily_revenue_v2.sql")
V2_RULES = Path("macros/revenue/fct_daily_revenue_expected_sql.sql")
FACTS = Path("models/marts/payments/fct_payments.sql")
FACTS_YML = Path("models/marts/payments/_payments__models.yml")
REVENUE_YML = Path("models/marts/revenue/_revenue__models.yml")
SAMPLE = [SAMPLE_START + timedelta(days=n) for n in range(SAMPLE_DAYS)]
# The change: v2 leaves out one market's refunds from its second day on, in the mart and
# in the rules its audit checks it against (a change of method that passes its tests).
MOVED_MARKET, FROM_DAY = "FR", SAMPLE[1]
LEAVE_OUT = (
    f"not (status = 'refunded' and market = '{MOVED_MARKET}' and event_date >= date '{FROM_DAY}')"
)


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=refill test", "-c", "user.email=test@example.invalid", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A git repository holding a copy of the project, committed on `main` (the base)."""
    folder = tmp_path_factory.mktemp("refill-ci") / "project"
    folder.mkdir()
    for part in PROJECT_PARTS:
        source = PROJECT / part
        if source.is_dir():
            subprocess.run(["cp", "-r", str(source), str(folder / part)], check=True)
        else:
            (folder / part).write_bytes(source.read_bytes())
    (folder / ".gitignore").write_text("target/\nlogs/\nwarehouse/\n")
    git(folder, "init", "--quiet", "--initial-branch=main")
    git(folder, "add", "--all")
    git(folder, "commit", "--quiet", "-m", "the project as it is")
    return folder


def branch(clone: Path, name: str, edits: dict[Path, tuple[str, str]], start: str = "main") -> None:
    """Check out a new branch of `start` with each file's (old, new) text replaced,
    committed."""
    git(clone, "checkout", "--quiet", "--force", start)
    git(clone, "checkout", "--quiet", "-b", name)
    edit(clone, edits)
    git(clone, "commit", "--quiet", "--all", "-m", name)


def edit(clone: Path, edits: dict[Path, tuple[str, str]]) -> None:
    """Replace each file's (old, new) text, in the working tree only."""
    for path, (old, new) in edits.items():
        text = (clone / path).read_text()
        assert text.count(old) == 1, f"{path}: {old!r} is not there once"
        (clone / path).write_text(text.replace(old, new))


def _environment() -> dict[str, str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("REFILL_PROJECT_DIR", "REFILL_LANDING", "REFILL_WAREHOUSE", "DBT_TARGET")
        and not key.startswith("DBT_TARGET_PATH")
    }
    environment["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    return environment


def refill_ci(clone: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REFILL), "ci", *args],
        cwd=clone,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=1200,
    )


def report_rows(report: Path) -> dict[tuple[date, str, str, str], tuple[Decimal, Decimal]]:
    """The report's table: (day, model, market, measure) -> (base, this change)."""
    rows = {}
    for line in _section(report, "## numbers"):
        day, model, key, measure, base, change = line.strip("| ").split(" | ")[:6]
        market = key.removeprefix("market=")
        rows[(date.fromisoformat(day), model, market, measure)] = (
            Decimal(base.replace(",", "")),
            Decimal(change.replace(",", "")),
        )
    return rows


def report_values(report: Path) -> dict[tuple[date, str, str, str], tuple[int, int]]:
    """The report's other values: (day, model, key, column) -> how many of the base's values
    the change does not have, and the other way round."""
    rows = {}
    for line in _section(report, "## other values"):
        day, model, key, column, base, change = line.strip("| ").split(" | ")[:6]
        rows[(date.fromisoformat(day), model, key, column)] = (_count(base), _count(change))
    return rows


def _count(cell: str) -> int:
    return 0 if cell == "-" else int(cell.split(" ", 1)[0].replace(",", ""))


def _section(report: Path, heading: str) -> list[str]:
    """The table rows of the report's section whose heading starts with `heading`."""
    rows, inside = [], False
    for line in report.read_text().splitlines():
        if line.startswith("## "):
            inside = line.startswith(heading)
        elif inside and line.startswith("| 20"):
            rows.append(line)
    return rows


def left_out_per_day(landing: Path, from_day: date = FROM_DAY) -> dict[date, int]:
    """The oracle: per day of the sample, the published refunds of the market the change
    leaves out, counted from the landing's files."""
    counts = {}
    for day in SAMPLE:
        records = expected_day(landing, day).records
        counts[day] = sum(
            1
            for _tx, _ts, _amount, _currency, market, status in records
            if market == MOVED_MARKET and status == "refunded" and day >= from_day
        )
    return counts


def head(clone: Path) -> str:
    return git(clone, "rev-parse", "--short=12", "HEAD").strip()


def test_a_changed_mart_reports_exactly_the_days_and_markets_it_moves(clone, tmp_path):
    branch(
        clone,
        "leave-out-refunds",
        {
            V2: (
                "and status in ('captured', 'refunded')\n",
                f"and status in ('captured', 'refunded')\n        and {LEAVE_OUT}\n",
            ),
            V2_RULES: (
                "    from {{ payments }}\n    group by 1\n",
                f"    from {{{{ payments }}}}\n    where {LEAVE_OUT}\n    group by 1\n",
            ),
        },
    )
    report = tmp_path / "report.md"
    done = refill_ci(clone, "--base", "main", "--report", str(report))
    assert done.returncode == 0, done.stderr
    for step in ("building the base", "building and testing this change", "comparing"):
        assert step in done.stderr

    left_out = left_out_per_day(clone / WORK_FOLDER / "landing")
    moved_days = {day for day, count in left_out.items() if count}
    assert moved_days, "the sample has no refund to leave out: the test shows nothing"
    rows = report_rows(report)
    assert {(day, model, market) for day, model, market, _ in rows} == {
        (day, "fct_daily_revenue_v2", MOVED_MARKET) for day in moved_days
    }
    for day in moved_days:
        base, change = rows[(day, "fct_daily_revenue_v2", MOVED_MARKET, "transactions")]
        assert base - change == left_out[day]
    assert f"{len(moved_days)} day(s)" in done.stdout


def test_a_change_that_moves_no_number_says_so(clone, tmp_path):
    branch(clone, "comment-only", {V2: ("-#}\n", "    (a comment: no number moves)\n-#}\n")})
    report = tmp_path / "report.md"
    done = refill_ci(clone, "--base", "main", "--report", str(report))
    assert done.returncode == 0, done.stderr
    assert "no published number changes" in done.stdout
    assert "no published number changes" in report.read_text()
    assert report_rows(report) == {} and report_values(report) == {}
    compared = next(
        line for line in report.read_text().splitlines() if line.startswith("- models compared")
    )
    for model in ("fct_daily_revenue_v1", "fct_daily_revenue_v2", "fct_payments"):
        assert model in compared


def test_a_change_whose_tests_fail_exits_non_zero_in_one_line(clone, tmp_path):
    # v2 leaves out a market's refunds without its rules (nor its unit test) knowing
    branch(
        clone,
        "untested-change",
        {V2: ("and status in ('captured', 'refunded')\n", "and status = 'captured'\n")},
    )
    report = tmp_path / "report.md"
    done = refill_ci(clone, "--base", "main", "--report", str(report))
    assert done.returncode == 1
    errors = done.stderr.strip().splitlines()[-1]
    assert errors.startswith("refill: error: this change fails its tests: ")
    assert "fct_daily_revenue" in errors
    assert errors.removeprefix("refill: error: ") in report.read_text()


@pytest.mark.parametrize("ref", ["no-such-branch", "--output=/tmp/x", "main~99"])
def test_a_ref_that_names_no_commit_is_refused_in_one_line(clone, ref, tmp_path):
    git(clone, "checkout", "--quiet", "--force", "main")
    shutil.rmtree(clone / WORK_FOLDER, ignore_errors=True)
    # GIVEN the report of an earlier run where this one would write its own
    report = tmp_path / "report.md"
    report.write_text("# refill ci: an earlier run\n\n**no published number changes**\n")
    # WHEN the run is refused
    done = refill_ci(clone, f"--base={ref}", "--report", str(report))
    # THEN in one line, before anything was built, and no report looks like its own
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("refill: error: --base: ")
    assert not (clone / WORK_FOLDER).exists()
    assert not report.exists()


def test_a_change_that_also_edits_what_its_yaml_declares_still_reports_every_moved_number(
    clone, tmp_path
):
    # GIVEN a change of one exchange rate that also takes revenue_usd out of the versioned
    # marts' declared measures and makes the facts' declared total the local amount
    moved_day, currency = SAMPLE[1], "EUR"
    old_rate = fx_rates_of(clone / FX_SEED)[(moved_day, currency)]
    new_rate = old_rate + Decimal("0.01")
    branch(
        clone,
        "hostile-yaml",
        {
            FX_SEED: (f"{moved_day},{currency},{old_rate}", f"{moved_day},{currency},{new_rate}"),
            REVENUE_YML: ("measures: [revenue_usd, transactions]", "measures: [transactions]"),
            FACTS_YML: ("totals: amount_usd\n", "totals: amount\n"),
        },
    )
    # WHEN refill ci compares it with main
    report = tmp_path / "report.md"
    done = refill_ci(clone, "--base", "main", "--report", str(report))
    assert done.returncode == 0, done.stderr

    # THEN the facts' amount_usd moves on that day by what the oracle computes from the
    # landing at each rate, and the marts' revenue_usd moves: v2 on that day, v1 (the
    # month's average rate) on every day of the window
    assert "no published number changes" not in done.stdout
    truth = expected_day(clone / WORK_FOLDER / "landing", moved_day)
    rates = fx_rates_of(clone / FX_SEED)
    rows = report_rows(report)
    base, change = rows[(moved_day, "fct_payments", "-", "amount_usd")]
    assert change - base == _usd(truth, moved_day, rates) - _usd(
        truth, moved_day, {**rates, (moved_day, currency): old_rate}
    )
    assert change != base
    v2_days = {
        day
        for day, model, _, measure in rows
        if (model, measure) == ("fct_daily_revenue_v2", "revenue_usd")
    }
    v1_days = {
        day
        for day, model, _, measure in rows
        if (model, measure) == ("fct_daily_revenue_v1", "revenue_usd")
    }
    assert v2_days == {moved_day}
    assert v1_days == set(SAMPLE)
    assert {day for day, model, _, _ in rows if model == "fct_payments"} == {moved_day}


def _usd(truth: DayTruth, day: date, rates: dict[tuple[date, str], Decimal]) -> Decimal:
    return truth.amount_usd(day, rates)


def test_an_undeclared_column_and_an_uncommitted_change_are_reported(clone, tmp_path):
    # GIVEN a committed change of v2's refunds (a column no YAML declares as a measure: a
    # market's refunds no longer counted, in the mart and in its rules) ...
    refunds = "count(*) filter (where status = 'refunded') as refunds"
    not_counted = (
        f"count(*) filter (where status = 'refunded' and market <> '{MOVED_MARKET}') as refunds"
    )
    branch(
        clone, "undeclared-refunds", {V2: (refunds, not_counted), V2_RULES: (refunds, not_counted)}
    )
    # ... and, not committed, the facts' event_ts cut to the minute (a timestamp: a value
    # that is not a number)
    edit(
        clone,
        {
            FACTS: (
                "-- timestamps (UTC)\n        event_ts,\n",
                "-- timestamps (UTC)\n        date_trunc('minute', event_ts) as event_ts,\n",
            )
        },
    )
    try:
        # WHEN refill ci compares the checkout with main
        report = tmp_path / "report.md"
        done = refill_ci(clone, "--base", "main", "--report", str(report))
    finally:
        git(clone, "checkout", "--quiet", "--", ".")
    assert done.returncode == 0, done.stderr

    # THEN the report names the checkout as its commit with uncommitted changes ...
    assert f"change: {head(clone)} + uncommitted changes" in report.read_text()
    assert f"({head(clone)} + uncommitted changes)" in done.stdout
    # ... v2's refunds move for that market on every day, by the oracle's count ...
    landing = clone / WORK_FOLDER / "landing"
    left_out = left_out_per_day(landing, from_day=SAMPLE[0])
    assert all(left_out.values()), "a day of the sample has no refund to leave out"
    rows = report_rows(report)
    assert {(day, model, measure) for day, model, _, measure in rows} == {
        (day, "fct_daily_revenue_v2", "refunds") for day in SAMPLE
    }
    for day in SAMPLE:
        base, change = rows[(day, "fct_daily_revenue_v2", MOVED_MARKET, "refunds")]
        assert base - change == left_out[day]
    # ... and the facts' event_ts values change on each day, as many as the oracle's
    # payments that did not happen on a whole minute
    values = report_values(report)
    for day in SAMPLE:
        off_the_minute = sum(
            1
            for _tx, ts, *_ in expected_day(landing, day).records
            if datetime.fromisoformat(ts.replace("Z", "+00:00")).second
        )
        assert off_the_minute
        assert values[(day, "fct_payments", "-", "event_ts")] == (off_the_minute, off_the_minute)
    assert {column for _, _, _, column in values} == {"event_ts"}


def test_a_change_that_fixes_a_broken_base_passes_and_says_the_base_did_not_build(clone, tmp_path):
    # GIVEN a base branch whose v2 does not compile, and a change that fixes it
    final = "\nselect * from final"
    branch(clone, "broken-main", {V2: (final, final + " where")})
    branch(clone, "fixes-main", {V2: (final + " where", final)}, start="broken-main")
    # WHEN refill ci compares the fix with the broken base
    report = tmp_path / "report.md"
    done = refill_ci(clone, "--base", "broken-main", "--report", str(report))
    # THEN the change's own build and tests decide: exit 0; the report says the base failed
    # to build and that nothing was compared
    assert done.returncode == 0, done.stderr
    said = report.read_text()
    # (its build stops at v2's unit test, which runs the broken SQL before the model)
    assert "the base broken-main fails" in said and "fct_daily_revenue" in said
    assert "nothing compared" in said and "this change built and its tests passed" in said
    assert "nothing compared" in done.stdout
    assert report_rows(report) == {}


def _dbt_child(process: subprocess.Popen, timeout: float = 300.0) -> psutil.Process:
    """The dbt build `refill ci` started, once it runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        for child in psutil.Process(process.pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if "build" in child.cmdline() and any("dbt" in p for p in child.cmdline()):
                    return child
        time.sleep(0.2)
    raise AssertionError("refill ci started no dbt build")


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _worktrees(clone: Path) -> list[str]:
    listed = git(clone, "worktree", "list", "--porcelain")
    return [line for line in listed.splitlines() if line.startswith("worktree ")]


def test_one_run_per_checkout_and_a_killed_run_leaves_nothing_the_next_one_trips_on(
    clone, tmp_path
):
    # GIVEN a branch whose fault point can hold a build in fct_payments' audit (a query
    # that does not end) and a run whose base build is held there
    git(clone, "checkout", "--quiet", "--force", "main")
    git(clone, "checkout", "--quiet", "-b", "armed")
    (clone / "macros/faults/refill_fault_point.sql").write_text(ARMED_FAULT_POINT)
    git(clone, "commit", "--quiet", "--all", "-m", "armed")
    held = tmp_path / "held"
    first = subprocess.Popen(
        [str(REFILL), "ci", "--base", "armed", "--report", str(tmp_path / "first.md")],
        cwd=clone,
        env={**_environment(), "REFILL_TEST_FAULT": f"in_audit:fct_payments!{held}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    dbt = None
    try:
        dbt = _dbt_child(first)
        _wait_for(held, first)
        # WHEN a second run starts in the same checkout
        second = refill_ci(clone, "--base", "armed", "--report", str(tmp_path / "second.md"))
        # THEN it is refused in one line naming the run that holds the checkout
        assert second.returncode == 1
        assert second.stderr.count("\n") == 1, second.stderr
        assert second.stderr.startswith("refill: error: another refill ci is running")
        assert f"pid {first.pid}" in second.stderr
        # WHEN the first is killed with SIGKILL while its dbt build runs
        first.kill()
        first.wait()
        assert _running(dbt)  # SIGKILL took only refill ci: its build goes on ...
        assert len(_worktrees(clone)) == 2  # ... and its base worktree is still registered
        # THEN the next run ends the build the killed one left, removes its worktree, runs
        report = tmp_path / "report.md"
        done = refill_ci(clone, "--base", "armed", "--report", str(report))
        assert done.returncode == 0, done.stderr
        assert f"stopped the dbt build a killed run left running (pid {dbt.pid})" in done.stderr
        assert "no published number changes" in report.read_text()
        assert not _running(dbt)
        assert len(_worktrees(clone)) == 1
    finally:
        # whatever failed, no build is left holding its query (it would never end)
        for process in (first, dbt):
            with contextlib.suppress(psutil.Error, OSError, AttributeError):
                process.kill()  # psutil's kill checks first that the pid is still that build


def _wait_for(marker: Path, process: subprocess.Popen, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not marker.exists():
        assert process.poll() is None, "refill ci ended before its build reached the fault"
        assert time.monotonic() < deadline, "the build never reached the fault point"
        time.sleep(0.2)
