"""The lock protocol on an engine with concurrent writers (Spark): a lock per day, so two runs
over disjoint days write at once, a run over a held day waits and names its holder, and a
backfill takes no further day while a daily run waits (live first)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from refill.warehouse import locking
from refill.warehouse.partition_locks import appends_in_turn, gate, holders, partition_locks


def hold_days_in_another_process(folder, days, seconds):
    code = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from refill.warehouse.partition_locks import partition_locks
        with partition_locks(Path({str(folder)!r}), run_id="other-run", command="backfill",
                             priority="history", partitions={days!r}, wait_seconds=5):
            print("held", flush=True)
            time.sleep({seconds})
        """
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "held"
    return child


@pytest.fixture
def other(tmp_path):
    children = []

    def start(days, seconds=30):
        child = hold_days_in_another_process(tmp_path, days, seconds)
        children.append(child)
        return child

    yield start
    for child in children:
        child.kill()
        child.wait()


def test_two_runs_over_disjoint_days_hold_their_locks_at_once(tmp_path, other):
    other(["2026-01-01", "2026-01-02"])
    started = time.monotonic()
    with partition_locks(
        tmp_path,
        run_id="me",
        command="backfill",
        priority=locking.HISTORY,
        partitions=["2026-01-03", "2026-01-04"],
        wait_seconds=5,
    ):
        held = holders(tmp_path)
        assert {day: h.run_id for day, h in held.items()} == {
            "2026-01-01": "other-run",
            "2026-01-02": "other-run",
            "2026-01-03": "me",
            "2026-01-04": "me",
        }
    assert time.monotonic() - started < 2
    assert set(holders(tmp_path)) == {"2026-01-01", "2026-01-02"}  # mine released


def test_a_run_over_a_held_day_waits_and_names_the_holder(tmp_path, other):
    other(["2026-01-02"])
    told = []
    with pytest.raises(locking.LockTimeout, match=r"held by run other-run \(backfill"):
        with partition_locks(
            tmp_path,
            run_id="me",
            command="daily",
            priority=locking.LIVE,
            partitions=["2026-01-03", "2026-01-02"],
            wait_seconds=0.5,
            on_wait=told.append,
        ):
            pass
    assert [holder.run_id for holder in told] == ["other-run"]
    assert "2026-01-03" not in holders(tmp_path)  # all or none: nothing held while waiting


def test_a_dead_holders_days_are_free_at_once(tmp_path, other):
    child = other(["2026-01-02"])
    child.kill()
    child.wait()
    with partition_locks(
        tmp_path,
        run_id="me",
        command="daily",
        priority=locking.LIVE,
        partitions=["2026-01-02"],
        wait_seconds=2,
    ):
        assert holders(tmp_path)["2026-01-02"].run_id == "me"


def test_a_backfill_takes_no_further_day_while_a_daily_run_waits(tmp_path):
    waiting = locking.Holder("daily-run", "daily", locking.LIVE, ["2026-01-05"])
    with locking.live_waiting(gate(tmp_path), waiting):
        with pytest.raises(locking.LockTimeout, match="daily-run"):
            with partition_locks(
                tmp_path,
                run_id="bf",
                command="backfill",
                priority=locking.HISTORY,
                partitions=["2026-01-01"],
                wait_seconds=0.5,
            ):
                pass
    with partition_locks(
        tmp_path,
        run_id="bf",
        command="backfill",
        priority=locking.HISTORY,
        partitions=["2026-01-01"],
        wait_seconds=0.5,
    ):
        pass


def test_a_file_where_the_folder_should_be_is_refused(tmp_path):
    target = tmp_path / "spark"
    target.write_text("not a folder")
    with pytest.raises(Exception, match="is a file, not a folder"):
        with partition_locks(target, run_id="me", command="daily", priority=locking.LIVE):
            pass


def test_appends_from_two_processes_take_turns(tmp_path):
    """Spark commits an append through one `_temporary` folder per table, which the first
    job to finish deletes: a process appending while another does must wait for it."""
    code = textwrap.dedent(
        f"""
        import time
        from refill.warehouse.partition_locks import appends_in_turn
        with appends_in_turn("file:" + {str(tmp_path)!r}):
            print("appending", flush=True)
            time.sleep(2)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "appending"
        began = time.monotonic()
        with appends_in_turn(str(tmp_path)):  # the same folder, spelled as a plain path
            waited = time.monotonic() - began
        assert waited > 1.0  # it waited for the other process's append to end
    finally:
        child.kill()
        child.wait()
