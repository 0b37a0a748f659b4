"""The warehouse lock: bounded waits that name the holder, dead holders, live first."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

from flows import locking


def hold_lock_in_another_process(warehouse, seconds: float, priority="history"):
    """A separate process that takes the lock, says so, and keeps it for `seconds`."""
    code = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from flows import locking
        with locking.warehouse_lock(Path({str(warehouse)!r}), run_id="holder-run",
                                    command="backfill", priority={priority!r}):
            print("held", flush=True)
            time.sleep({seconds})
        """
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    return process


def test_a_waiter_gives_up_naming_the_holder(tmp_path):
    warehouse = tmp_path / "refill.duckdb"
    holder = hold_lock_in_another_process(warehouse, 30)
    try:
        with pytest.raises(locking.LockTimeout, match=r"held by run holder-run \(backfill, pid"):
            with locking.warehouse_lock(
                warehouse, run_id="me", command="daily", priority=locking.LIVE, wait_seconds=0.5
            ):
                pass
    finally:
        holder.kill()
        holder.wait()


def test_a_dead_holders_lock_is_released_at_once(tmp_path):
    warehouse = tmp_path / "refill.duckdb"
    holder = hold_lock_in_another_process(warehouse, 30)
    holder.kill()
    holder.wait()
    assert locking.lock_path(warehouse).exists()  # SIGKILL left the file behind

    started = time.monotonic()
    with locking.warehouse_lock(
        warehouse, run_id="me", command="daily", priority=locking.LIVE, wait_seconds=5
    ) as mine:
        assert locking.read_holder(warehouse).run_id == mine.run_id
    assert time.monotonic() - started < 2
    assert not locking.lock_path(warehouse).exists()


def test_an_expired_lock_is_taken_over(tmp_path):
    warehouse = tmp_path / "refill.duckdb"
    stale = locking.Holder("old", "backfill", locking.HISTORY, host="another-host", pid=1)
    stale.expires_at = "2000-01-01T00:00:00+00:00"
    locking.lock_path(warehouse).write_text(json.dumps(stale.__dict__))

    with locking.warehouse_lock(
        warehouse, run_id="me", command="daily", priority=locking.LIVE, wait_seconds=1
    ):
        assert locking.read_holder(warehouse).run_id == "me"


def test_history_waits_while_a_live_run_waits(tmp_path):
    warehouse = tmp_path / "refill.duckdb"
    live_waiter = locking.Holder("daily-run", "daily", locking.LIVE)
    note = locking.waiting_dir(warehouse) / "waiting.json"
    note.parent.mkdir(parents=True)
    note.write_text(json.dumps(live_waiter.__dict__))

    with pytest.raises(locking.LockTimeout, match="daily-run"):
        with locking.warehouse_lock(
            warehouse, run_id="bf", command="backfill", priority=locking.HISTORY, wait_seconds=0.5
        ):
            pass
    note.unlink()
    with locking.warehouse_lock(
        warehouse, run_id="bf", command="backfill", priority=locking.HISTORY, wait_seconds=0.5
    ):
        pass
