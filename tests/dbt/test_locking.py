"""The warehouse lock: bounded waits that name the holder, dead holders, live first."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time

import duckdb
import pytest

from refill.warehouse import locking, ops
from tests.helpers import hold_lock_in_another_process


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
    assert locking.read_holder(warehouse) is None  # released (the lock file itself stays)


def test_a_record_left_by_a_dead_holder_is_taken_over(tmp_path):
    warehouse = tmp_path / "refill.duckdb"
    stale = locking.Holder("old", "backfill", locking.HISTORY, host="another-host", pid=1)
    locking.holder_path(warehouse).write_text(json.dumps(stale.__dict__))
    assert locking.read_holder(warehouse) is None  # no process holds its lock

    with locking.warehouse_lock(
        warehouse, run_id="me", command="daily", priority=locking.LIVE, wait_seconds=1
    ):
        assert locking.read_holder(warehouse).run_id == "me"


def test_history_waits_while_a_live_run_waits(tmp_path):
    warehouse = tmp_path / "refill.duckdb"
    live_waiter = locking.Holder("daily-run", "daily", locking.LIVE)
    with locking.live_waiting(warehouse, live_waiter):
        with pytest.raises(locking.LockTimeout, match="daily-run"):
            with locking.warehouse_lock(
                warehouse,
                run_id="bf",
                command="backfill",
                priority=locking.HISTORY,
                wait_seconds=0.5,
            ):
                pass
    with locking.warehouse_lock(
        warehouse, run_id="bf", command="backfill", priority=locking.HISTORY, wait_seconds=0.5
    ):
        pass


# -- finding 11: a live holder is never displaced; a dead one's lock is free at once -----------


def rewrite_holder_record(warehouse, **changes) -> None:
    """Change what the holder's record says about it, as another host, a PID namespace or
    a long run would make it look; the process itself keeps running and holding."""
    path = locking.holder_path(warehouse)
    record = json.loads(path.read_text())
    record.update(changes)
    path.write_text(json.dumps(record))


@pytest.mark.parametrize(
    "looks",
    [
        {"expires_at": "2000-01-01T00:00:00+00:00"},  # a run longer than any TTL
        {"pid": 2**22 + 17},  # same host name, another PID namespace (a container)
    ],
    ids=["record-looks-expired", "pid-not-visible-here"],
)
def test_a_live_holder_is_never_displaced_whatever_its_record_says(tmp_path, looks):
    # GIVEN a live process holding the lock, whose record looks stale to a waiter
    warehouse = tmp_path / "refill.duckdb"
    holder = hold_lock_in_another_process(warehouse, 30)
    try:
        rewrite_holder_record(warehouse, **looks)

        # WHEN another run asks for the warehouse
        # THEN it waits and gives up naming the holder; it never takes the lock
        with pytest.raises(locking.LockTimeout, match="held by run holder-run"):
            with locking.warehouse_lock(
                warehouse, run_id="me", command="daily", priority=locking.LIVE, wait_seconds=1
            ):
                pass
        assert holder.poll() is None
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holders_lock_is_free_at_once_even_when_its_record_names_another_host(
    tmp_path,
):
    # GIVEN a holder whose record says it runs on another host, SIGKILLed while holding
    warehouse = tmp_path / "refill.duckdb"
    holder = hold_lock_in_another_process(warehouse, 30)
    rewrite_holder_record(warehouse, host="another-host")
    holder.kill()
    holder.wait()

    # WHEN a run asks for the warehouse
    started = time.monotonic()
    with locking.warehouse_lock(
        warehouse, run_id="me", command="daily", priority=locking.LIVE, wait_seconds=5
    ):
        # THEN it has it at once: the kernel released the dead process's lock
        assert locking.read_holder(warehouse).run_id == "me"
    assert time.monotonic() - started < 2


# -- refill's readers between two chunks ------------------------------------------------------


def make_warehouse(warehouse) -> None:
    duckdb.connect(str(warehouse)).close()


def test_a_waiting_reader_goes_before_a_backfills_next_chunk(tmp_path):
    warehouse = tmp_path / "refill.duckdb"
    make_warehouse(warehouse)
    order: list[str] = []

    def read() -> None:
        with locking.warehouse_lock(
            warehouse, run_id="board", command="board", priority=locking.READ, wait_seconds=10
        ):
            order.append("read")
            time.sleep(0.2)

    # GIVEN a backfill building a chunk, and a reader (status, the board) waiting for it
    reader = threading.Thread(target=read)
    with locking.warehouse_lock(
        warehouse, run_id="bf", command="backfill", priority=locking.HISTORY
    ):
        reader.start()
        while not list(locking.waiting_dir(warehouse).glob("*.json")):
            time.sleep(0.005)
    # WHEN the backfill asks for the warehouse again at once, for its next chunk
    with locking.warehouse_lock(
        warehouse, run_id="bf", command="backfill", priority=locking.HISTORY, wait_seconds=10
    ):
        order.append("next chunk")
    reader.join()

    # THEN the reader read between the two chunks
    assert order == ["read", "next chunk"]


def test_a_read_inside_the_same_threads_write_does_not_deadlock(tmp_path):
    # GIVEN a writer holding the warehouse (and so the file)
    warehouse = tmp_path / "refill.duckdb"
    make_warehouse(warehouse)
    with locking.warehouse_lock(warehouse, run_id="w", command="daily", priority=locking.LIVE):
        with ops.connect(warehouse) as connection:
            connection.execute("create table t as select 1 as one")
        # WHEN the same thread reads through the readers' protocol
        with ops.read_warehouse(warehouse, wait_seconds=1) as connection:
            # THEN it reads at once, and the writer still holds the lock
            assert connection.execute("select one from t").fetchall() == [(1,)]
        assert locking.read_holder(warehouse).run_id == "w"
    assert locking.read_holder(warehouse) is None


def test_a_killed_live_waiters_note_does_not_hold_back_history(tmp_path):
    # GIVEN a daily run waiting for the warehouse in another process, then SIGKILLed
    warehouse = tmp_path / "refill.duckdb"
    code = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from refill.warehouse import locking
        waiter = locking.Holder("daily-run", "daily", locking.LIVE)
        with locking.live_waiting(Path({str(warehouse)!r}), waiter):
            print("waiting", flush=True)
            time.sleep(30)
        """
    )
    waiter = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert waiter.stdout.readline().strip() == "waiting"
    waiter.kill()
    waiter.wait()
    assert list(locking.waiting_dir(warehouse).glob("*.json"))  # SIGKILL left its note

    # WHEN a backfill asks for the warehouse, THEN it has it at once: the note's lock went
    # with its process
    started = time.monotonic()
    with locking.warehouse_lock(
        warehouse, run_id="bf", command="backfill", priority=locking.HISTORY, wait_seconds=5
    ):
        pass
    assert time.monotonic() - started < 1
    assert not list(locking.waiting_dir(warehouse).glob("*.json"))
