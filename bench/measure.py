"""One measured run: a command in its own process, its wall time, CPU time and peak memory.

Peak memory is the largest resident set of the whole process tree (the command and
everything it starts), sampled every few milliseconds with psutil, and never less than
the kernel's own peak for the largest single process (wait4's ru_maxrss) when that is
above the bench's own peak (a child's ru_maxrss starts there). CPU time is
user + system of the command and its reaped children (wait4), and of every descendant it
left running when it exited: pyspark never waits for its JVM, which finishes after the
Python process (and was not counted at all before: 0.5 s of a session start's 18.7 s).
The bench makes itself their child subreaper, so such an orphan becomes its child, and
reaps it for its rusage; the wall time still ends when the command exits. The machine's
other load during the run is recorded too: the figures of a shared 2-core machine mean
little without it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

SAMPLE_SECONDS = 0.02
# How long an orphaned descendant may take to exit after the command did (a JVM stops
# when its Python parent closes its stdin: a second or two), before it is killed.
ORPHAN_EXIT_SECONDS = 120.0
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


@dataclass
class Measurement:
    """What one run cost. `other_cores` is the CPU the rest of the machine used meanwhile."""

    command: list[str]
    returncode: int
    wall_seconds: float
    cpu_seconds: float
    peak_rss_bytes: int
    other_cores: float
    log: str
    # how many processes of each name the tree held (e.g. java: the JVMs a Spark run started)
    processes: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def to_json(self) -> dict:
        return asdict(self)


class RunFailed(RuntimeError):
    """A measured command exited non-zero; the message ends with its last output lines."""


def run_measured(
    command: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    log: Path,
    timeout_seconds: float = 3600,
    check: bool = True,
) -> Measurement:
    """Run `command`, wait for it, and return what it cost. Its output goes to `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    _become_subreaper()
    busy_before = _machine_busy_seconds()
    # A child's ru_maxrss starts at the bench's own peak resident size (Linux carries the
    # high-water mark of the memory it forked or vforked from across exec): below that,
    # only the sampler knows.
    bench_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with log.open("w") as output:
        clock = time.perf_counter()
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: a timeout ends the whole tree
        )
        sampler = _PeakSampler(process.pid)
        sampler.start()
        timer = threading.Timer(timeout_seconds, _end_group, [process.pid])
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
            sampler.stop()
        wall = time.perf_counter() - clock
    process.returncode = os.waitstatus_to_exitcode(status)
    cpu = (
        usage.ru_utime
        + usage.ru_stime
        + _reap_orphans([*sorted(set(sampler.seen) - {process.pid}), -process.pid])
    )
    others = max(_machine_busy_seconds() - busy_before - cpu, 0.0) / wall if wall else 0.0
    measurement = Measurement(
        command=[str(part) for part in command],
        returncode=process.returncode,
        wall_seconds=round(wall, 3),
        cpu_seconds=round(cpu, 3),
        peak_rss_bytes=max(
            sampler.peak, usage.ru_maxrss * 1024 if usage.ru_maxrss * 1024 > bench_peak else 0
        ),
        other_cores=round(others, 2),
        processes=dict(Counter(sampler.seen.values())),
        log=str(log),
    )
    if check and not measurement.ok:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise RunFailed(
            f"{' '.join(measurement.command)} exited {measurement.returncode} (log {log}):\n{tail}"
        )
    return measurement


def _is_unexeced_copy(process: psutil.Process, parent: psutil.Process | None) -> bool:
    """Whether `process` is its parent forked and not yet exec'd: the same program under
    the name of the thread that forked it. A JVM starts every helper (Hadoop's local file
    system runs `chmod` for each file it writes) that way, and such a copy shows the JVM's
    whole resident set, pages it shares with the JVM: summed, each fork counted the JVM
    twice (a refill run on Spark peaked at 3.9 GiB with one 1.2 GiB JVM)."""
    return (
        parent is not None
        and process.name() != parent.name()
        and process.exe() == parent.exe() != ""
    )


class _PeakSampler(threading.Thread):
    """Polls the summed RSS of a process and its descendants until stopped (a copy of a
    parent that has not exec'd yet counts nothing: its pages are the parent's)."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.seen: dict[int, str] = {}  # every process of the tree (pid: name), while in it
        self._stopped = threading.Event()

    def run(self) -> None:
        try:
            root = psutil.Process(self.pid)
        except psutil.Error:
            return
        while not self._stopped.is_set():
            try:
                processes = [root, *root.children(recursive=True)]
            except psutil.Error:
                return
            total = 0
            for process in processes:
                if process.pid not in self.seen:
                    with contextlib.suppress(psutil.Error):
                        self.seen[process.pid] = process.name()
            by_pid = {process.pid: process for process in processes}
            for process in processes:
                with contextlib.suppress(psutil.Error):
                    if not _is_unexeced_copy(process, by_pid.get(process.ppid())):
                        total += process.memory_info().rss
            self.peak = max(self.peak, total)
            self._stopped.wait(SAMPLE_SECONDS)

    def stop(self) -> None:
        self._stopped.set()
        self.join()


def _become_subreaper() -> None:
    """Orphaned descendants of the bench's commands become the bench's children (Linux),
    so _reap_orphans can collect their CPU time. Elsewhere they are not counted."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _reap_orphans(targets: list[int]) -> float:
    """Wait for the command's descendants left running and reparented to the bench, and
    return their CPU seconds (their own children's included). `targets` are wait4 targets:
    the pids the sampler saw (one that left the command's process group, too), then minus
    the group's id for any it did not see. A process its own parent reaped is not our
    child: its CPU is already in that parent's."""
    cpu = 0.0
    deadline = time.monotonic() + ORPHAN_EXIT_SECONDS
    for target in targets:
        while True:
            try:
                reaped, status, usage = os.wait4(target, os.WNOHANG)
            except ChildProcessError:
                break
            if reaped:
                cpu += usage.ru_utime + usage.ru_stime
                if target > 0:
                    break
                continue  # the group may hold more
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    (os.killpg if target < 0 else os.kill)(abs(target), signal.SIGKILL)
                deadline = float("inf")  # killed: its exit comes at once
            time.sleep(0.05)
    return cpu


def _machine_busy_seconds() -> float:
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def _end_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
