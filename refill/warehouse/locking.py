"""The warehouse lock: one refill writer at a time, live runs before history, readers between.

DuckDB lets a process write a file only when no other process has it open, so a partition
lock on DuckDB is a lock on the warehouse, held per dbt invocation (a daily run's window,
one chunk of a backfill) and released between chunks.

- The lock is an OS lock (flock, through the `filelock` library) on `<warehouse>.lock`,
  held by the process: the kernel releases it when the process ends, however it ends, so
  a dead holder's lock is free at once and a live holder is never displaced. Nothing is
  guessed from pids, host names or expiry times.
- Its holder writes who it is (run id, command, pid, host, since, partitions) to
  `<warehouse>.lock.holder` after taking it and removes it before letting go, so a waiting
  run can say who holds it. A record whose lock is free is what a killed holder left.
- A daily run ("live") or a reader that has to wait leaves a waiting note in
  `<warehouse>.waiting/`, itself held under an OS lock of its own; a backfill ("history")
  does not take the lock while a live note is held: live data first, history second, and
  refill's readers get in between two chunks.
- Having the lock, a writer also waits (within the same bound) until no process outside
  refill (the duckdb CLI, a BI tool) has the file open, says which process it waits for,
  and then keeps the file open itself (a DuckDB connection in this process) until it lets
  go: dbt's connection in this process shares it, so no outside reader can take the file
  between the wait and dbt opening it. This needs the default DuckDB configuration on
  dbt's connection (profiles.yml sets no `config_options`; `settings` are fine).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import filelock

from refill.errors import FailedStep, RefillError

LIVE = "live"
HISTORY = "history"
READ = "read"  # refill's own readers: status, gaps, the planner, the board, cutover's checks
POLL_SECONDS = 0.05
# A reader polls faster: a backfill frees the lock between two chunks for a moment only.
READ_POLL_SECONDS = 0.005
FILE_POLL_SECONDS = 0.2
# DuckDB's refusal to open a file another process holds: "... Conflicting lock is held in
# <program> (PID <n>) ..." (the program and pid are absent when the OS does not say).
_FILE_CONFLICT = re.compile(r"Could not set lock on file")
_CONFLICT_HOLDER = re.compile(r"held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")


# A reader waits this long for a write in progress (one chunk of a backfill, a daily run's
# window) to end; writers take the lock per chunk, and let waiting readers in first.
DEFAULT_READ_WAIT_SECONDS = 300.0


class LockTimeout(RefillError):
    """The lock stayed with another run longer than this run was willing to wait. Transient
    unless said otherwise: the holder finishes, and waiting again can succeed."""

    def __init__(
        self,
        message: str,
        *,
        transient: bool = True,
        failed_step: FailedStep = FailedStep.OTHER,
    ):
        super().__init__(message, transient=transient, failed_step=failed_step)


class WarehouseOpenElsewhere(LockTimeout):
    """A process outside refill kept the warehouse file open longer than the lock wait.
    `holder`: that process, as the engine named it (None after a pickle round trip)."""

    def __init__(self, message: str, *, holder: FileHolder | None = None, **kwargs):
        super().__init__(message, **kwargs)
        self.holder = holder


@dataclass
class Holder:
    run_id: str
    command: str
    priority: str
    partitions: list[str] = field(default_factory=list)
    pid: int = field(default_factory=os.getpid)
    host: str = field(default_factory=socket.gethostname)
    since: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    def describe(self) -> str:
        return (
            f"run {self.run_id} ({self.command}, pid {self.pid} on {self.host}) since {self.since}"
        )


@dataclass(frozen=True)
class FileHolder:
    """A process outside refill with the warehouse file open, as DuckDB names it."""

    program: str
    pid: int | None

    def describe(self) -> str:
        pid = f"PID {self.pid}" if self.pid is not None else "PID unknown"
        return f"process {self.program} ({pid}), which has the file open outside refill"


_RECORD_FIELDS = tuple(Holder.__dataclass_fields__)


def lock_path(warehouse: Path) -> Path:
    return warehouse.with_name(warehouse.name + ".lock")


def holder_path(warehouse: Path) -> Path:
    return warehouse.with_name(warehouse.name + ".lock.holder")


def waiting_dir(warehouse: Path) -> Path:
    return warehouse.with_name(warehouse.name + ".waiting")


def _os_lock(path: Path) -> filelock.BaseFileLock:
    """The process's own lock object for `path`: re-entrant within a thread (a read inside a
    write of the same thread does not deadlock); another thread or process contends."""
    return filelock.FileLock(path, is_singleton=True, fallback_to_soft=False)


def _is_held(path: Path) -> bool:
    """True when some process (this one included) holds the OS lock on `path` now."""
    if not path.exists():
        return False
    probe = filelock.FileLock(path, fallback_to_soft=False)  # its own descriptor: contends
    try:
        probe.acquire(blocking=False)
    except filelock.Timeout:
        return True
    except OSError:
        return False
    probe.release()
    return False


def _read_record(path: Path) -> Holder | None:
    try:
        record = json.loads(path.read_text())
        return Holder(**{name: record[name] for name in _RECORD_FIELDS if name in record})
    except (FileNotFoundError, ValueError, TypeError, AttributeError):
        return None


def _write_record(path: Path, holder: Holder) -> None:
    """Atomically (a reader never sees half a record)."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
    partial.write_text(json.dumps(asdict(holder)))
    os.replace(partial, path)


def read_holder(warehouse: Path) -> Holder | None:
    """Who holds the warehouse lock now, or None when nobody does. A record left by a holder
    that was killed is not a holder: its lock went with its process."""
    holder = _read_record(holder_path(warehouse))
    if holder is None or not _is_held(lock_path(warehouse)):
        return None
    return holder


@contextlib.contextmanager
def warehouse_lock(
    warehouse: Path,
    *,
    run_id: str,
    command: str,
    priority: str,
    partitions: list[str] | None = None,
    wait_seconds: float = 900,
    on_wait: Callable[[Holder | FileHolder], None] | None = None,
) -> Iterator[Holder]:
    """Hold the warehouse for the duration of the block; wait at most `wait_seconds` for it,
    and then (writers) for processes outside refill to close the file.

    `on_wait` is told once whom this run waits for (a Holder, or a FileHolder outside refill).
    Raises LockTimeout (WarehouseOpenElsewhere for an outside process) naming the holder."""
    holder = Holder(run_id, command, priority, [str(p) for p in partitions or []])
    check_location(warehouse, create=priority != READ)
    deadline = time.monotonic() + wait_seconds
    lock, nested = _acquire(warehouse, holder, deadline, wait_seconds, on_wait)
    reservation = None
    try:
        if priority != READ and not nested:
            remaining = max(deadline - time.monotonic(), 0)
            reservation = open_for_writing(warehouse, remaining, on_wait, wait_seconds)
        yield holder
    finally:
        if reservation is not None:
            reservation.close()
        if not nested:
            holder_path(warehouse).unlink(missing_ok=True)
        lock.release()


def _acquire(
    warehouse: Path, holder: Holder, deadline: float, wait_seconds: float, on_wait
) -> tuple[filelock.BaseFileLock, bool]:
    lock = _os_lock(lock_path(warehouse))
    nested = lock.is_locked  # this thread holds it already: a read inside its own write
    poll = READ_POLL_SECONDS if holder.priority == READ else POLL_SECONDS
    told = queued = False
    with contextlib.ExitStack() as waiting:
        while True:
            # History yields to a waiting live run or reader (unless it holds the lock already).
            yields = holder.priority == HISTORY and not nested
            blocker = _live_waiter(warehouse) if yields else None
            if blocker is None:
                if _try(lock):
                    if not nested:
                        try:
                            _write_record(holder_path(warehouse), holder)
                        except BaseException:
                            lock.release()
                            raise
                    return lock, nested
                blocker = read_holder(warehouse)
            if time.monotonic() >= deadline:
                who = blocker.describe() if blocker else "another run"
                raise LockTimeout(
                    f"warehouse {warehouse.name} is held by {who}; waited {wait_seconds:g}s. "
                    "Retry when it finishes, or pass a longer --lock-wait"
                )
            if not queued and holder.priority in (LIVE, READ):
                waiting.enter_context(_waiting_note(warehouse, holder))  # history waits now
                queued = True
            if not told and on_wait is not None and blocker is not None:
                on_wait(blocker)
                told = True
            time.sleep(poll)


def _try(lock: filelock.BaseFileLock) -> bool:
    try:
        lock.acquire(blocking=False)
    except filelock.Timeout:
        return False
    except OSError as error:  # a lock file another account owns, a read-only filesystem
        raise RefillError(
            f"cannot take the warehouse lock {lock.lock_file}: {error.strerror or error}; "
            "refill needs write access to the lock file beside the warehouse"
        ) from None
    return True


@contextlib.contextmanager
def _waiting_note(warehouse: Path, holder: Holder) -> Iterator[None]:
    """A note that this run waits, alive exactly as long as its OS lock is held."""
    folder = waiting_dir(warehouse)
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
    note_lock = filelock.FileLock(folder / f"{stem}.lock", fallback_to_soft=False)
    note_lock.acquire(blocking=False)  # a name of its own: nobody else takes it
    note = folder / f"{stem}.json"
    try:
        _write_record(note, holder)
        yield
    finally:
        note.unlink(missing_ok=True)
        note_lock.release()
        (folder / f"{stem}.lock").unlink(missing_ok=True)


def _live_waiter(warehouse: Path) -> Holder | None:
    """A live run or a reader waiting for the warehouse (a dead waiter's note is cleared)."""
    folder = waiting_dir(warehouse)
    if not folder.is_dir():
        return None
    for note in sorted(folder.glob("*.json")):
        waiter = _read_record(note)
        if waiter is None:
            continue
        if not _is_held(note.with_suffix(".lock")):  # its process is gone (or just left)
            note.unlink(missing_ok=True)
            note.with_suffix(".lock").unlink(missing_ok=True)
            continue
        return waiter
    return None


def live_waiter(warehouse: Path) -> Holder | None:
    """A live run or a reader waiting for the warehouse now (the scheduler of parallel
    chunks starts none while one waits)."""
    return _live_waiter(warehouse)


@contextlib.contextmanager
def live_waiting(warehouse: Path, holder: Holder) -> Iterator[None]:
    """Stand in the queue as `holder` (a live run waiting) for the block's duration."""
    with _waiting_note(warehouse, holder):
        yield


# -- the file itself: processes outside refill ---------------------------------------------------


def file_holder(error: BaseException | str) -> FileHolder | None:
    """The process DuckDB names when it refuses to open the file because another process
    has it open; None when `error` is something else."""
    text = str(error)
    if not _FILE_CONFLICT.search(text):
        return None
    found = _CONFLICT_HOLDER.search(text)
    if found is None:
        return FileHolder("another process", None)
    return FileHolder(found.group("program"), int(found.group("pid")))


def open_for_writing(
    warehouse: Path,
    wait_seconds: float,
    on_wait: Callable[[Holder | FileHolder], None] | None = None,
    lock_wait_seconds: float | None = None,
) -> duckdb.DuckDBPyConnection | None:
    """A read-write connection to the warehouse, once no process outside refill has it
    open; None when there is no file yet (the writer creates it) or this process has it
    open already. While it is open, this process holds the file: its other read-write
    connections with the default configuration (dbt's, the boundary's) share it. Raises
    WarehouseOpenElsewhere, naming the outside process, after `wait_seconds` (what is left
    of the run's `lock_wait_seconds`). Call it holding the warehouse lock (warehouse_lock
    does, for every writer)."""
    if not warehouse.is_file():
        return None  # nobody can hold a file that is not there yet
    deadline = time.monotonic() + wait_seconds
    told = False
    while True:
        try:
            return duckdb.connect(str(warehouse))
        except duckdb.ConnectionException:
            return None  # this process has it open already, in another configuration
        except duckdb.IOException as error:
            outside = file_holder(error)
            if outside is None:
                raise
        if time.monotonic() >= deadline:
            raise WarehouseOpenElsewhere(
                f"warehouse {warehouse.name} is open in {outside.describe()}; waited "
                f"{lock_wait_seconds if lock_wait_seconds is not None else wait_seconds:g}s. "
                "Close it (readers: docs/reference/commands.md, Reading the warehouse "
                "while refill writes) and rerun, or pass a longer --lock-wait",
                holder=outside,
            ) from None
        if not told and on_wait is not None:
            on_wait(outside)
            told = True
        time.sleep(FILE_POLL_SECONDS)


# -- where the warehouse lives ----------------------------------------------------------------


def check_location(warehouse: Path, create: bool) -> None:
    """One-line refusals for a warehouse path that cannot work. A writer (`create`) makes
    the folder; a reader never creates anything and needs the file to exist."""
    if warehouse.is_dir():
        raise RefillError(
            f"warehouse {warehouse} is a folder, not a DuckDB file; point REFILL_WAREHOUSE at "
            f"the warehouse file (for example {warehouse / 'refill.duckdb'})"
        )
    if warehouse.exists():
        if not is_duckdb_file(warehouse):
            raise RefillError(
                f"warehouse {warehouse} is not a DuckDB database file; point REFILL_WAREHOUSE "
                "at the warehouse file"
            )
    elif not create:
        raise RefillError(
            f"no warehouse at {warehouse}: check REFILL_WAREHOUSE, or build it first "
            "(`refill daily` or `refill backfill`)"
        )
    folder = warehouse.parent
    if create:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise RefillError(
                f"cannot create the warehouse folder {folder}: {error.strerror}"
            ) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise RefillError(
            f"cannot write in the warehouse folder {folder} (permission denied): refill keeps "
            "its lock beside the warehouse file; give this user write access to the folder"
        )


# A DuckDB database file carries this at byte 8 of its first block.
_DUCKDB_MAGIC = b"DUCK"


def is_duckdb_file(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(12)
    except OSError:
        return False
    return head[8:12] == _DUCKDB_MAGIC
