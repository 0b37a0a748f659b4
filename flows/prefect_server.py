"""The temporary Prefect server of a `refill` command, started early and out of Ctrl-C's way.

A flow command needs a Prefect API. When none is configured (PREFECT_API_URL), Prefect
would start a temporary server itself, before the flow's first line, taking ~10 s of the
command's start-up, and in the terminal's process group, so the user's Ctrl-C killed it
while refill still had a run to close. refill starts the same server itself:

- early, in the background, while the command parses its options and the dbt project
  (the two take about as long): the user waits for the longer, not the sum;
- in a session of its own: the terminal's Ctrl-C reaches refill, which stops at a safe
  point and closes its run on a server that is still there; refill stops the server
  when it exits (and before a second Ctrl-C ends it at once).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator

from refill.errors import RefillError

STARTUP_TIMEOUT_SECONDS = 120
MAX_RESTARTS = 2


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class TemporaryServer:
    """A Prefect API server process for one command (the same app Prefect's own temporary
    server runs: uvicorn, no UI, the default database)."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.api_url = f"http://127.0.0.1:{self.port}/api"
        self.stopping = False
        self.restarts = 0
        self.process = self._launch()
        atexit.register(self.stop_after_the_logs)
        threading.Thread(target=self._restart_when_lost, daemon=True).start()

    def _launch(self) -> subprocess.Popen:
        environment = {
            **os.environ,
            "PREFECT_UI_ENABLED": "0",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT__SERVER_EPHEMERAL": "1",
            "PREFECT__SERVER_FINAL": "1",
        }
        return subprocess.Popen(
            [sys.executable, "-m", "flows.prefect_server", str(os.getpid()), str(self.port)],
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # not in the terminal's process group: Ctrl-C is refill's
        )

    def _restart_when_lost(self) -> None:
        """A server lost during a run (killed, crashed) comes back on the same port and
        database, within the Prefect client's retries: a command never hangs on a dead API.
        A server that keeps dying stops the run at its next safe point instead."""
        from refill import interrupts

        while not self.stopping:
            time.sleep(0.5)
            if self.stopping or self.process.poll() is None:
                continue
            if self.restarts >= MAX_RESTARTS:
                print(
                    f"refill: the temporary Prefect server exited {self.restarts + 1} times; "
                    "stopping at the next safe point",
                    file=sys.stderr,
                    flush=True,
                )
                interrupts.request("the loss of the Prefect server")
                return
            self.restarts += 1
            print(
                f"refill: the temporary Prefect server exited (status "
                f"{self.process.returncode}); restarting it on the same port",
                file=sys.stderr,
                flush=True,
            )
            self.process = self._launch()

    def wait_until_ready(self, timeout: float = STARTUP_TIMEOUT_SECONDS) -> str:
        import httpx  # here, not at the top: the server launches before the heavy imports

        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RefillError(
                    f"the temporary Prefect server exited with status {self.process.returncode}; "
                    "run `prefect server start` and set PREFECT_API_URL"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.api_url}/health", timeout=1).status_code == 200:
                    return self.api_url
            if time.monotonic() >= deadline:
                self.stop()
                raise RefillError(
                    f"the temporary Prefect server did not answer within {timeout:g}s; "
                    "run `prefect server start` and set PREFECT_API_URL"
                )
            time.sleep(0.1)

    def stop_after_the_logs(self) -> None:
        """At the command's end: send the run's last log lines to this server, then stop it.

        Stopped first, the log lines had nowhere to go and Python's logging shutdown waited
        out Prefect's 5 s drain timeout on every command (measured: 5.0 s of a backfill's
        exit, after its summary)."""
        # Prefect's logging not imported: no run was logged, so there is nothing to send
        # (a usage error after the server launched exits without importing it)
        handlers = sys.modules.get("prefect.logging.handlers")
        if self.process.poll() is None and handlers is not None:
            with contextlib.suppress(Exception):
                handlers.APILogWorker.drain_all(timeout=5)
        self.stop()

    def stop(self) -> None:
        """Stop the server now (also a second Ctrl-C's cleanup, which does not wait for logs)."""
        self.stopping = True
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def configured_api_url() -> str | None:
    """The Prefect API the user configured (environment or profile), if any."""
    from prefect.settings import get_current_settings

    return get_current_settings().api.url or None


_pending: TemporaryServer | None = None


def _api_configured_without_importing_prefect() -> bool:
    """Whether an API is configured, as far as it can be told without importing Prefect's
    settings (seconds): the environment's PREFECT_API_URL. Prefect already imported (a
    test, the demo's second run), its own answer."""
    if "prefect.settings" in sys.modules:
        return bool(configured_api_url())
    return bool(os.environ.get("PREFECT_API_URL"))


HELD_AT_LAUNCH = frozenset({signal.SIGINT, signal.SIGTERM})


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait (they are delivered when the block ends) in this thread, and
    in the processes and threads it starts, which unblock them themselves."""
    signal.pthread_sigmask(signal.SIG_BLOCK, HELD_AT_LAUNCH)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_AT_LAUNCH)


def start_in_background() -> None:
    """Start the command's temporary server now, unless an API is configured or it runs.

    Called before Prefect is imported: an API set in a Prefect profile or settings file
    is found only later, by `keep_only_if_needed`, which stops this server then."""
    global _pending
    if _pending is None and not _api_configured_without_importing_prefect():
        from refill import interrupts

        # Ctrl-C waits while the server launches and its stop is registered: a signal in
        # between ended the command and left the server to notice its parent's exit later
        # (seen once in CI, under load). The server unblocks them first thing (_serve).
        with _signals_held():
            _pending = TemporaryServer()
            interrupts.on_immediate_exit(_pending.stop)


def keep_only_if_needed() -> None:
    """Once Prefect is imported: an API configured in a profile or a settings file is the
    one the flows use, so the server started before it could be read is stopped."""
    global _pending
    if _pending is not None and configured_api_url():
        _pending.stop()
        _pending = None


@contextlib.contextmanager
def api_for_flows() -> Iterator[None]:
    """Point Prefect at the command's temporary server for the block, once it answers.
    Without one (none started, or an API configured), Prefect's own settings apply."""
    if _pending is None:
        yield
        return
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
        temporary_settings,
    )

    from refill import interrupts

    with interrupts.interruptible("while the Prefect server started"):
        url = _pending.wait_until_ready()
    # No flow run heartbeats: they tell a lasting server that a run's process is alive, and
    # this server lives exactly as long as the process. Sent, each flow's end waited for the
    # heartbeat thread's one-second sleep (0.59 s of a cold `refill daily`, profiled).
    with temporary_settings(
        updates={PREFECT_API_URL: url, PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}
    ):
        yield


def _serve(parent_pid: int, port: int) -> None:
    """The server process: Prefect's app under uvicorn, until refill (its parent) is gone,
    however it ended (a SIGKILL runs no atexit)."""
    # launched with the signals held (start_in_background): a signal mask outlives exec
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_AT_LAUNCH)
    import uvicorn

    def exit_with_parent() -> None:
        while os.getppid() == parent_pid:
            time.sleep(1)
        os._exit(0)

    threading.Thread(target=exit_with_parent, daemon=True).start()
    server = uvicorn.Server(
        uvicorn.Config(
            "prefect.server.api.server:create_app",
            factory=True,
            host="127.0.0.1",
            port=port,
            log_level="error",
            lifespan="on",
        )
    )
    threading.Thread(target=_warm_up, args=(server, port), daemon=True).start()
    server.run()
    if not server.started:  # as uvicorn.run ends: the command reads the status it exited with
        sys.exit(uvicorn.config.STARTUP_FAILURE)


WARM_UP_READS = (
    ("GET", "/admin/version", None),
    ("POST", "/flows/filter", b'{"limit": 1}'),
    ("POST", "/flow_runs/filter", b'{"limit": 1}'),
)


def _warm_up(server, port: int) -> None:
    """Once uvicorn serves, make the app's first requests here: the first request and the
    first database read cost 0.28 s and 0.18 s (later ones about 5 ms), which the command's
    first flow paid, waiting. Made here, they run on the server's own core while the command
    parses its dbt project. Reads only: they change nothing in Prefect's database."""
    while not server.started:  # set by uvicorn once the app's startup ran and it listens
        if server.should_exit:
            return
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}/api"
    local = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy
    for method, path, body in WARM_UP_READS:
        request = urllib.request.Request(
            base + path, data=body, method=method, headers={"Content-Type": "application/json"}
        )
        with contextlib.suppress(OSError), local.open(request, timeout=10):
            pass


if __name__ == "__main__":
    _serve(int(sys.argv[1]), int(sys.argv[2]))
