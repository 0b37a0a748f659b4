"""One `refill ci` per checkout at a time, and what a killed one left behind.

A run holds an OS lock on `target/refill-ci/run.lock` for its lifetime (the kernel
releases it however the run ends) and keeps, beside it in `run.json`, what it started
that outlives it if it is killed with SIGKILL (a runner's cancel, the OOM killer): its
dbt child and the base's git worktree. A second run in the same checkout is refused in
one line naming the holder. The next run, once it holds the lock, ends the child the
record names (only if it is that very process: the same pid, boot, start tick and
command line) and removes the worktree, before it builds anything.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psutil
from filelock import FileLock, Timeout

from refill.errors import RefillError

LOCK_NAME = "run.lock"
RECORD_NAME = "run.json"
BASE_FOLDER_PREFIX = "refill-ci-base-"  # the temporary folder of the base's worktree
STOP_SECONDS = 10.0
GIT_TIMEOUT_SECONDS = 600.0


@dataclass
class Run:
    """This run's record: what it started that a SIGKILL would leave behind."""

    path: Path
    record: dict = field(default_factory=dict)

    def note(self, **fields: object) -> None:
        self.record.update(fields)
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_text(json.dumps(self.record, indent=1), encoding="utf-8")
        temporary.replace(self.path)

    def started_child(self, process: subprocess.Popen) -> None:
        """The dbt child, as the next run will know it if this one is killed."""
        with contextlib.suppress(psutil.Error):
            child = psutil.Process(process.pid)
            self.note(child=_identity(child))

    def started_worktree(self, top: Path, checkout: Path, folder: Path) -> None:
        self.note(worktree={"top": str(top), "checkout": str(checkout), "folder": str(folder)})


@contextlib.contextmanager
def one_run(work: Path) -> Iterator[Run]:
    """Hold the checkout's `refill ci` lock for the run, after cleaning what a killed run
    left; RefillError in one line, naming the holder, when another run holds it."""
    work.mkdir(parents=True, exist_ok=True)
    lock = FileLock(work / LOCK_NAME, is_singleton=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RefillError(_refusal(work)) from None
    record = work / RECORD_NAME
    try:
        left = _read(record)
        if left:
            clean_after(left)
        run = Run(record)
        run.note(
            **_identity(psutil.Process()),
            started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        )
        yield run
    finally:
        record.unlink(missing_ok=True)
        lock.release()


def clean_after(left: dict) -> None:
    """End the dbt child a killed run left running and remove its base worktree."""
    child = left.get("child")
    if child and _stop(child):
        _progress(f"stopped the dbt build a killed run left running (pid {child['pid']})")
    worktree = left.get("worktree")
    if worktree:
        folder = Path(worktree["folder"])
        if folder.name.startswith(BASE_FOLDER_PREFIX):
            with contextlib.suppress(RefillError):
                git(Path(worktree["top"]), "worktree", "remove", "--force", worktree["checkout"])
            existed = folder.exists()
            shutil.rmtree(folder, ignore_errors=True)
            if existed:
                _progress(f"removed the base worktree a killed run left at {folder}")
        with contextlib.suppress(RefillError):
            git(Path(worktree["top"]), "worktree", "prune")


def base_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix=BASE_FOLDER_PREFIX))


def git(folder: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise RefillError(f"git {args[0]} failed: {error}") from None
    if done.returncode != 0:
        message = " ".join(done.stderr.split()) or str(done.returncode)
        raise RefillError(f"git {args[0]} failed: {message}")
    return done.stdout.strip()


def _identity(process: psutil.Process) -> dict:
    """What tells this process from a later one given the same pid: the boot and the clock
    ticks after it at which the process started, and its command line. Not psutil's
    create_time: it adds the boot time /proc/stat gives now, which moves by a second when
    the clock is stepped (a CI machine's first minutes), so a later run saw another time."""
    return {
        "pid": process.pid,
        "boot_id": _boot_id(),
        "start_ticks": _start_ticks(process.pid),
        "command": process.cmdline(),
    }


def _is_same(process: psutil.Process, recorded: dict) -> bool:
    with contextlib.suppress(psutil.Error, OSError, ValueError, KeyError):
        return (
            recorded["boot_id"] == _boot_id()
            and recorded["start_ticks"] == _start_ticks(process.pid)
            and process.cmdline() == list(recorded["command"])
        )
    return False


def _boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def _start_ticks(pid: int) -> int:
    """/proc/<pid>/stat field 22: when the process started, in clock ticks after boot."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[19])  # the name, in parentheses, may hold spaces


def _stop(recorded: dict) -> bool:
    """Kill the recorded process and its children if it is still that process."""
    try:
        process = psutil.Process(int(recorded["pid"]))
    except (psutil.Error, KeyError, TypeError, ValueError):
        return False
    if not _is_same(process, recorded):
        return False
    with contextlib.suppress(psutil.Error):
        group = [*process.children(recursive=True), process]
        for member in group:
            with contextlib.suppress(psutil.Error):
                member.kill()
        _wait_gone(group)
    return True


def _wait_gone(group: list[psutil.Process]) -> None:
    """Until each is gone or a zombie (a killed orphan whose new parent does not reap it:
    it holds nothing), at most STOP_SECONDS."""
    deadline = time.monotonic() + STOP_SECONDS
    while time.monotonic() < deadline:
        if not any(_alive(member) for member in group):
            return
        time.sleep(0.1)


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _refusal(work: Path) -> str:
    holder = _read(work / RECORD_NAME) or {}
    who = f"pid {holder['pid']}" if holder.get("pid") else "a process"
    since = f", started {holder['started_at']}" if holder.get("started_at") else ""
    command = " ".join(holder.get("command") or [])[:120]
    said = f" ({command})" if command else ""
    return (
        f"another refill ci is running in this checkout: {who}{since}{said}; "
        f"wait for it to end (or stop it), then rerun; its lock is {work / LOCK_NAME}"
    )


def _read(path: Path) -> dict | None:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _progress(line: str) -> None:
    print(f"refill ci: {line}", file=sys.stderr, flush=True)
