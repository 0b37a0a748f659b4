"""Ctrl-C (SIGINT) and SIGTERM on the command line: the first stops at a safe point, the
second at once.

The first signal only sets a flag, except while the command merely waits (for the Prefect
server, for a late file, between a chunk's attempts), where it stops at once. The dbt
invocation in flight is never interrupted: it is one transaction (a chunk is one commit),
so it either commits whole or rolls back whole; letting it finish keeps its work and the
attempt row that says what it did. No chunk starts after the flag is set. The flow closes
its run log as `interrupted` and ends Cancelled; the command prints its summary and exits
130.

The second signal ends the process at once (`os._exit`), after one line and after stopping
the temporary Prefect server. Nothing is left half-written: the open DuckDB transaction,
if any, is rolled back when the file is next opened, and the OS releases the warehouse
lock and the run's liveness lock (refill/warehouse/run_liveness.py), so the next command
sees the run as interrupted, not running.

Only `refill` arms these handlers. A deployment run on a worker keeps Prefect's own
SIGTERM handling (the worker's cancel). What ties them to Prefect (its SIGTERM bridge, a
flow run ending Cancelled) is in flows/signals.py: this module knows no orchestrator.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import NoReturn

from refill.errors import EXIT_INTERRUPTED

EXIT_CODE = EXIT_INTERRUPTED  # one home: refill/errors.py
HANDLED = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):  # noqa: N818 (an outcome, like KeyboardInterrupt)
    """The user stopped the run; raised only at a safe point.

    A BaseException, like KeyboardInterrupt: Prefect does not retry a task on it, and the
    `except Exception` of code that reports and carries on does not swallow it."""


class _State:
    armed = False
    requested: str | None = None  # the first signal's name
    deferred = 0  # inside work that must finish (a dbt invocation and its attempt row)
    interruptible = 0  # inside a wait that may end at once
    on_exit: list[Callable[[], None]] = []


_state = _State()


def stop_at_once_until_armed() -> None:
    """The command line's first step. Until a command arms the safe-point handlers (`arm`),
    nothing has started that needs closing, so SIGINT or SIGTERM ends the command at once,
    with one line and exit 130. (The harness's long run saw a signal during start-up, while
    Python imported Prefect, end a command with the signal's own status, -2 or -15.)"""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in HANDLED:
        signal.signal(signum, _stop_before_the_run)


def _stop_before_the_run(signum: int, frame) -> None:
    name = signal.Signals(signum).name
    for cleanup in reversed(_state.on_exit):  # the temporary server, if it was launched
        with contextlib.suppress(Exception):
            cleanup()
    os.write(2, f"refill: {name} before the run started: stopped, nothing was done\n".encode())
    os._exit(EXIT_CODE)


def arm() -> None:
    """Install the handlers (the command line, main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return
    _state.armed = True
    for signum in HANDLED:
        signal.signal(signum, _handle)


def is_armed() -> bool:
    """Whether the command line's handlers are in place (a worker's runs: no)."""
    return _state.armed


def handle(signum: int, frame=None) -> None:
    """What a signal does to an armed command: the first asks for a stop at the next safe
    point (at once while merely waiting), a second ends the process. For handlers of other
    code to pass a signal on (flows/signals.py: Prefect's SIGTERM bridge)."""
    _handle(signum, frame)


@contextlib.contextmanager
def sigterm_stops_at_safe_points() -> Iterator[None]:
    """While armed, SIGTERM in the block is refill's first or second signal, like Ctrl-C,
    whatever handler other code installed around it (Prefect's flow engine installs its
    own around a flow run); the previous handler is put back after."""
    previous = None
    if _state.armed and threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _handle)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def disarm(exit_status: int | None = None) -> None:
    """The command has ended. Run in-process (tests, the harness's driver), give the signals
    back to Python's defaults. As the `refill` program (`exit_status` given), a signal from
    here on ends the process at once with the command's own status: the run is finished
    and recorded, and only the process's teardown (Prefect's and dbt's threads, which can
    take a second) remains. With the defaults back, a SIGTERM there ended the command with
    the signal's status, -15, after it had printed its summary (harness seeds 1023, 2135).
    The handler is swapped in place, so no moment is left without one."""
    if threading.current_thread() is threading.main_thread():
        for signum in HANDLED:
            if exit_status is not None:
                signal.signal(signum, functools.partial(_end_with, exit_status))
            elif _state.armed:
                signal.signal(
                    signum,
                    signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL,
                )
    _state.armed = False
    _state.requested = None


def end_process(status: int) -> NoReturn:
    """End the `refill` program with `status` before Python's own teardown.

    That teardown puts the default signal handlers back and then clears the modules, where
    DuckDB's and dbt's objects close (which can take a second): a SIGTERM there killed a
    finished backfill with -15 after its summary (harness seeds 1023 and 2135). Here the
    threads that Python would wait for are joined and the exit hooks run (Prefect sends its
    last log lines there) while refill's handlers are in place; then the process ends."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()  # what Python's teardown would run, now, under our handlers
    _end_with(status, 0, None)


def _end_with(status: int, signum: int, frame) -> NoReturn:
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(status)


def on_immediate_exit(cleanup: Callable[[], None]) -> None:
    """Run `cleanup` before a second signal ends the process (stop the temporary server)."""
    _state.on_exit.append(cleanup)


def request(reason: str) -> None:
    """Ask the run to stop at its next safe point, as a first Ctrl-C does."""
    if _state.requested is None:
        _state.requested = reason


def requested() -> bool:
    return _state.requested is not None


def raise_if_requested(where: str) -> None:
    """A safe point: stop here if the user asked to stop."""
    if _state.requested is not None:
        raise Interrupted(f"interrupted by {_state.requested} {where}")


@contextlib.contextmanager
def interruptible(where: str) -> Iterator[None]:
    """A wait the first signal may end at once (nothing is being written)."""
    raise_if_requested(where)
    _state.interruptible += 1
    try:
        yield
    finally:
        _state.interruptible -= 1


def finishes_before_stopping(body):
    """Decorate work that must not be cut short by the first signal: the dbt invocation of
    a chunk and the attempt row that records it. A wait around it stays interruptible."""

    @functools.wraps(body)
    def wrapper(*args, **kwargs):
        _state.deferred += 1
        try:
            return body(*args, **kwargs)
        finally:
            _state.deferred -= 1

    return wrapper


def _handle(signum: int, frame) -> None:
    name = signal.Signals(signum).name
    if _state.requested is not None:
        _exit_now(name)
    _state.requested = name
    if _state.interruptible and not _state.deferred:
        raise Interrupted(f"interrupted by {name} while waiting")
    # os.write, not print: the signal can land while this thread is inside a write to
    # stderr (a log line), and a buffered write re-entered from a handler raises
    # "reentrant call" (seen under load in CI); fd 2 is the terminal's stderr
    os.write(
        2,
        f"refill: {name} received: stopping at the next safe point (the chunk in flight "
        "commits or rolls back whole; no further chunk starts). Again to stop at once.\n".encode(),
    )


def _exit_now(name: str) -> None:
    for cleanup in reversed(_state.on_exit):
        with contextlib.suppress(Exception):
            cleanup()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        _silence_resource_tracker()
    os.write(
        sys.stderr.fileno(),
        f"refill: {name} again: stopped at once; the run is left interrupted "
        "(its open transaction rolls back)\n".encode(),
    )
    os._exit(EXIT_CODE)


def _silence_resource_tracker() -> None:
    # multiprocessing's tracker process would report this process's semaphores as leaked,
    # in two more lines, once it sees the process gone: they are released with it anyway
    from multiprocessing import resource_tracker

    tracker_pid = getattr(resource_tracker._resource_tracker, "_pid", None)
    if tracker_pid:
        os.kill(tracker_pid, signal.SIGKILL)
