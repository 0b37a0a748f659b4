"""The lock protocol on an engine with concurrent writers (Spark): a lock per day.

Two runs write at once when their days are disjoint; a run over a day another run holds
waits for it. The priority is the warehouse lock's (refill.warehouse.locking): a live run
(daily) that has to wait leaves a waiting note beside the folder's gate, and a backfill
("history") takes no further day while such a note is held, so the daily run goes before the
backfill's next chunk. The locks are OS locks on files under `<folder>/locks/` (one per day,
`ops` for a lock without days: bookkeeping and seeds), released by the kernel with their
process; each held lock has a holder record so a waiting run can say whom it waits for.
A run takes all its days at once or none (no partial hold while waiting): two runs over
overlapping days cannot deadlock.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import filelock

from refill.errors import RefillError
from refill.warehouse import locking

# A lock without days (bookkeeping: the run log, an attempt; the seeds) serializes on this.
NO_DAYS = "ops"


def locks_dir(folder: Path) -> Path:
    return folder / "locks"


def gate(folder: Path) -> Path:
    """The path whose waiting notes hold the live runs' queue (locking.waiting_dir)."""
    return locks_dir(folder) / "gate"


def day_path(folder: Path, day: str) -> Path:
    return locks_dir(folder) / day


def holders(folder: Path) -> dict[str, locking.Holder]:
    """Who holds which day now (the board and a waiting run read it)."""
    found = {}
    for record in sorted(locks_dir(folder).glob("*.lock.holder")):
        name = record.name.removesuffix(".lock.holder")
        holder = locking.read_holder(day_path(folder, name))
        if holder is not None:
            found[name] = holder
    return found


@contextlib.contextmanager
def partition_locks(
    folder: Path,
    *,
    run_id: str,
    command: str,
    priority: str,
    partitions: list | None = None,
    wait_seconds: float = 900,
    on_wait: Callable[[locking.Holder], None] | None = None,
) -> Iterator[locking.Holder]:
    """Hold the days of `partitions` for the block (all or none), waiting at most
    `wait_seconds`. Raises LockTimeout naming a holder of a day it waited for."""
    holder = locking.Holder(run_id, command, priority, [str(p) for p in partitions or []])
    if folder.exists() and not folder.is_dir():
        raise RefillError(
            f"the Spark warehouse {folder} is a file, not a folder; point REFILL_SPARK_WAREHOUSE "
            "at the warehouse folder"
        )
    locks_dir(folder).mkdir(parents=True, exist_ok=True)
    names = sorted(set(holder.partitions)) or [NO_DAYS]
    deadline = time.monotonic() + wait_seconds
    held = _acquire(folder, names, holder, deadline, wait_seconds, on_wait)
    try:
        yield holder
    finally:
        for name, lock, nested in reversed(held):
            if not nested:
                locking.holder_path(day_path(folder, name)).unlink(missing_ok=True)
            lock.release()


def _acquire(folder, names, holder, deadline, wait_seconds, on_wait):
    told = queued = False
    with contextlib.ExitStack() as waiting:
        while True:
            blocker = None
            if holder.priority == locking.HISTORY:
                blocker = locking.live_waiter(gate(folder))
            if blocker is None:
                held, busy = _try_all(folder, names, holder)
                if busy is None:
                    return held
                blocker = locking.read_holder(day_path(folder, busy))
            if time.monotonic() >= deadline:
                who = blocker.describe() if blocker else "another run"
                raise locking.LockTimeout(
                    f"day(s) {', '.join(names)} of warehouse {folder.name} held by {who}; "
                    f"waited {wait_seconds:g}s. Retry when it finishes, or pass a longer "
                    "--lock-wait"
                )
            if not queued and holder.priority in (locking.LIVE, locking.READ):
                waiting.enter_context(locking._waiting_note(gate(folder), holder))
                queued = True
            if not told and on_wait is not None and blocker is not None:
                on_wait(blocker)
                told = True
            time.sleep(locking.POLL_SECONDS)


def _try_all(folder, names, holder):
    """Take every day's lock, or none: ([(name, lock, nested)], None) or ([], busy day)."""
    held: list[tuple[str, filelock.BaseFileLock, bool]] = []
    for name in names:
        lock = locking._os_lock(locking.lock_path(day_path(folder, name)))
        nested = lock.is_locked  # this thread holds it already
        if not locking._try(lock):
            for _, taken, _ in reversed(held):
                taken.release()
            return [], name
        held.append((name, lock, nested))
    try:
        for name, _, nested in held:
            if not nested:
                locking._write_record(locking.holder_path(day_path(folder, name)), holder)
    except BaseException:
        for _, taken, _ in reversed(held):
            taken.release()
        raise
    return held, None


@contextlib.contextmanager
def appends_in_turn(warehouse_dir: str) -> Iterator[None]:
    """Hold the warehouse's append lock while one process appends to a table.

    Spark commits an append through one `_temporary` folder inside the table's folder,
    and the first job to finish deletes it: two processes appending to one table at once
    (two chunks' readiness verdicts or attempts, at --max-concurrency 2) fail or lose rows.
    Appends are a few small rows, so the warehouse's processes take turns (an OS file lock;
    `warehouse_dir` as Spark's setting spells it, a path or a file: URI)."""
    folder = Path(warehouse_dir.removeprefix("file://").removeprefix("file:"))
    path = locks_dir(folder) / "appends"
    path.parent.mkdir(parents=True, exist_ok=True)
    with filelock.FileLock(path):
        yield
