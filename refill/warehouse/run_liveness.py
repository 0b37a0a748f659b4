"""Is a run still alive? Each run holds an OS lock file for its lifetime.

`ops.run_log` says `running` from a run's start until it records its end. A run that was
killed (SIGKILL, a second Ctrl-C, a lost machine, a crashed worker) never records its end;
its lock file says what the row cannot: the kernel releases an OS lock when its holder
dies, whatever killed it. So a `running` row whose lock nobody holds is a dead run, to be
shown as interrupted.

The lock files live beside the warehouse: `<warehouse>.runs/<run id>.lock`.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

_held: dict[tuple[Path, str], FileLock] = {}


def runs_dir(warehouse: Path) -> Path:
    return warehouse.with_name(warehouse.name + ".runs")


def lock_file(warehouse: Path, run_id: str) -> Path:
    # a run id is a Prefect UUID or `local-<date>`; anything else is made file-safe
    return runs_dir(warehouse) / (re.sub(r"[^A-Za-z0-9._-]", "_", run_id) + ".lock")


def hold(warehouse: Path, run_id: str) -> None:
    """Mark the run alive until `release` (or until the process dies). Take it before the
    run log says `running`."""
    key = (warehouse, run_id)
    if key in _held:
        return
    path = lock_file(warehouse, run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, is_singleton=False)
    lock.acquire(timeout=0)
    _held[key] = lock


def release(warehouse: Path, run_id: str) -> None:
    """The run recorded its end: drop its lock file."""
    lock = _held.pop((warehouse, run_id), None)
    if lock is None:
        return
    lock_file(warehouse, run_id).unlink(missing_ok=True)
    lock.release()


@contextlib.contextmanager
def scope() -> Iterator[None]:
    """Release, at the end of a flow body, every run lock taken inside it."""
    before = set(_held)
    try:
        yield
    finally:
        for warehouse, run_id in set(_held) - before:
            release(warehouse, run_id)


def released_at_end(flow_body):
    """Decorate a flow body: the run locks it took are released when it returns or raises
    (a process may run many flows: the demo, the harness, tests)."""

    @functools.wraps(flow_body)
    def wrapper(*args, **kwargs):
        with scope():
            return flow_body(*args, **kwargs)

    return wrapper


def is_alive(warehouse: Path, run_id: str) -> bool:
    """True while the run's process holds its lock. A run with no lock file (it ended, or
    it started before run locks existed) is not alive."""
    if (warehouse, run_id) in _held:
        return True
    path = lock_file(warehouse, run_id)
    if not path.exists():
        return False
    probe = FileLock(path, is_singleton=False)
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return True
    # nobody holds it: its run died without recording its end
    path.unlink(missing_ok=True)
    probe.release()
    return False
