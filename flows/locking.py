"""The warehouse lock: one refill writer at a time, live runs before history.

DuckDB lets one process write a file, so a partition lock on DuckDB is a lock on
the warehouse, held per dbt invocation (a daily run's window, one chunk of a
backfill) and released between chunks. Its holder is written into the lock file
(run id, command, pid, host, since, partitions) so a waiter can say who holds it.

- A holder that died is seen at once (same host, pid gone) and its lock released.
- A lock whose holder cannot be checked (another host) expires after its TTL.
- A daily run ("live") that is waiting registers itself; a backfill ("history")
  does not take the lock while a live run waits: live data first, history second.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from flows.errors import RefillError

LIVE = "live"
HISTORY = "history"
POLL_SECONDS = 0.2


class LockTimeout(RefillError):
    """The lock stayed with another run longer than this run was willing to wait."""


@dataclass
class Holder:
    run_id: str
    command: str
    priority: str
    partitions: list[str] = field(default_factory=list)
    pid: int = field(default_factory=os.getpid)
    host: str = field(default_factory=socket.gethostname)
    since: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    expires_at: str = ""

    def describe(self) -> str:
        return (
            f"run {self.run_id} ({self.command}, pid {self.pid} on {self.host}) since {self.since}"
        )


def lock_path(warehouse: Path) -> Path:
    return warehouse.with_name(warehouse.name + ".lock")


def waiting_dir(warehouse: Path) -> Path:
    return warehouse.with_name(warehouse.name + ".waiting")


def read_holder(warehouse: Path) -> Holder | None:
    try:
        return Holder(**json.loads(lock_path(warehouse).read_text()))
    except (FileNotFoundError, ValueError, TypeError):
        return None


def holder_is_gone(holder: Holder, now: datetime | None = None) -> bool:
    """Dead on this host, or past its expiry anywhere."""
    now = now or datetime.now(UTC)
    if holder.expires_at and datetime.fromisoformat(holder.expires_at) < now:
        return True
    if holder.host != socket.gethostname():
        return False
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, owned by someone else
        return False
    return False


@contextlib.contextmanager
def warehouse_lock(
    warehouse: Path,
    *,
    run_id: str,
    command: str,
    priority: str,
    partitions: list[str] | None = None,
    wait_seconds: float = 900,
    ttl_seconds: float = 6 * 3600,
    on_wait=None,
) -> Iterator[Holder]:
    """Hold the warehouse for the duration of the block; wait at most `wait_seconds`."""
    holder = Holder(run_id, command, priority, [str(p) for p in partitions or []])
    holder.expires_at = (datetime.now(UTC) + timedelta(seconds=ttl_seconds)).isoformat()
    _acquire(warehouse, holder, wait_seconds, on_wait)
    try:
        yield holder
    finally:
        _release(warehouse, holder)


def _acquire(warehouse: Path, holder: Holder, wait_seconds: float, on_wait) -> None:
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_seconds
    waiting_note = None
    if holder.priority == LIVE:
        waiting_note = waiting_dir(warehouse) / f"{os.getpid()}-{holder.run_id}.json"
        waiting_note.parent.mkdir(parents=True, exist_ok=True)
        waiting_note.write_text(json.dumps(asdict(holder)))
    told = False
    try:
        while True:
            blocker = _live_waiter(warehouse) if holder.priority == HISTORY else None
            if blocker is None:
                if _try_create(warehouse, holder):
                    return
                blocker = read_holder(warehouse)
                if blocker is not None and holder_is_gone(blocker):
                    _remove_if_still(warehouse, blocker)
                    continue
            if time.monotonic() >= deadline:
                who = blocker.describe() if blocker else "another run"
                raise LockTimeout(
                    f"warehouse {warehouse.name} is held by {who}; waited {wait_seconds:g}s. "
                    "Retry when it finishes, or pass a longer --lock-wait"
                )
            if on_wait is not None and not told and blocker is not None:
                on_wait(blocker)
                told = True
            time.sleep(POLL_SECONDS)
    finally:
        if waiting_note is not None:
            waiting_note.unlink(missing_ok=True)


def _try_create(warehouse: Path, holder: Holder) -> bool:
    try:
        descriptor = os.open(lock_path(warehouse), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(descriptor, "w") as handle:
        handle.write(json.dumps(asdict(holder)))
    return True


def _live_waiter(warehouse: Path) -> Holder | None:
    """A live run waiting for the warehouse (a dead waiter's note is cleared)."""
    folder = waiting_dir(warehouse)
    if not folder.is_dir():
        return None
    for note in sorted(folder.glob("*.json")):
        try:
            waiter = Holder(**json.loads(note.read_text()))
        except (FileNotFoundError, ValueError, TypeError):
            continue
        if holder_is_gone(waiter):
            note.unlink(missing_ok=True)
            continue
        return waiter
    return None


def _remove_if_still(warehouse: Path, stale: Holder) -> None:
    current = read_holder(warehouse)
    if current is not None and (current.pid, current.run_id) == (stale.pid, stale.run_id):
        lock_path(warehouse).unlink(missing_ok=True)


def _release(warehouse: Path, holder: Holder) -> None:
    current = read_holder(warehouse)
    if current is not None and (current.pid, current.run_id) == (holder.pid, holder.run_id):
        lock_path(warehouse).unlink(missing_ok=True)
