"""`refill board --serve`: the board on 127.0.0.1, redrawn while a run moves across it.

One thread watches, twice a second and without opening the warehouse, what the board is
drawn from: the lock's holder (which run builds which days now), the warehouse file and its
WAL, and the window's landing manifests. When one of them changes, the page is redrawn at
once with the new lock holder (the lamps move even while a build holds the file), and a
second thread reads the warehouse in full (`read.snapshot`, through ops.read_warehouse),
between two builds (a backfill lets a waiting reader in before its next chunk): a reader's
connection never makes a build fail to open the file. The page asks /state.json every
few seconds and reloads when the board's fingerprint changed.
"""

from __future__ import annotations

import http.server
import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from refill import settings
from refill.errors import RefillError
from refill.rules import planning
from refill.rules.readiness import MANIFEST_NAME, day_folder
from refill.views.board import page, read, rows
from refill.views.board.model import Board
from refill.warehouse import locking, ops

HOST = "127.0.0.1"  # the board shows run ids, paths and messages: never off this machine
POLL_SECONDS = 0.5
# A full read waits this long for the warehouse lock, then tries again at once: it gets in
# between two chunks of a backfill (which then waits for it, briefly), while the page shows
# the last full read with the lamps of the build in progress.
SERVE_LOCK_WAIT_SECONDS = 5.0
# At most one full read per this many seconds: a backfill of short chunks waits for
# each read, so the board reads between some chunks rather than between every two.
SECONDS_BETWEEN_READS = 2.0
STATE_PATH = "/state.json"

log = logging.getLogger("refill.board")


class BoardService:
    """The latest page and its fingerprint, kept current by `watch` and `read`."""

    def __init__(
        self,
        project,
        window: planning.DateRange,
        out: Path | None = None,
        lock_wait_seconds: float = SERVE_LOCK_WAIT_SECONDS,
    ):
        self.project = project
        self.window = window
        self.datasets = project.catalog.names  # whose landing manifests are watched
        self.out = out
        self.lock_wait_seconds = lock_wait_seconds
        self.board: Board | None = None
        self.fingerprint = ""
        self.full_reads = 0
        self.last_error: str | None = None
        self._guard = threading.Lock()
        self._inputs: tuple | None = None
        self._publishing = threading.Lock()  # one redraw at a time, from the latest read
        self._page = ""
        self.wanted = threading.Event()  # a full read is due
        self.wanted.set()
        self._publish(self._placeholder(), static=False)

    def _placeholder(self) -> Board:
        return Board(
            window=self.window,
            generated_at=ops.utc_now(),
            rows=[],
            data_as_of=["reading the warehouse..."],
            active_runs=[],
            recent_runs=[],
            run_notices=[],
            marts=[],
            builders=read.live_builders(settings.warehouse_path()),
            warehouse=str(settings.warehouse_path()),
        )

    @property
    def page(self) -> str:
        with self._guard:
            return self._page

    def state(self) -> dict:
        with self._guard:
            current = self.board
            fingerprint = self.fingerprint
        running = bool(current and (current.active_runs or current.builders))
        return {
            "fingerprint": fingerprint,
            "running": running,
            "building": [str(day) for day in current.building_days] if current else [],
            "generated_at": f"{current.generated_at:%Y-%m-%dT%H:%M:%S}" if current else None,
            "full_reads": self.full_reads,
            "last_error": self.last_error,
        }

    def inputs(self) -> tuple:
        """What the board is drawn from, by file metadata only (no warehouse connection)."""
        warehouse = settings.warehouse_path()
        who = tuple(
            (builder.run_id, builder.pid, tuple(builder.partitions))
            for builder in read.live_builders(warehouse)
        )
        files = [warehouse, warehouse.with_name(warehouse.name + ".wal")]
        landing = settings.landing_root()
        files += [
            day_folder(landing, dataset, day) / MANIFEST_NAME
            for dataset in self.datasets
            for day in self.window.days
        ]
        return (who, *(_stat(path) for path in files))

    def watch(self) -> None:
        """One look at the inputs: when one moved, redraw at once with the current lock holder
        (no warehouse read) and ask the reader for a full read."""
        inputs = self.inputs()
        if inputs == self._inputs:
            return
        self._inputs = inputs
        self.wanted.set()
        with self._publishing:
            if self.board is not None and self.full_reads:
                builders = read.live_builders(settings.warehouse_path())
                self._publish(rows.with_builders(self.board, builders, ops.utc_now()))

    def read(self) -> bool:
        """A full read of the warehouse, when one is wanted and the warehouse lock is free
        within the wait. True when the page was redrawn from it."""
        if not self.wanted.is_set():
            return False
        self.wanted.clear()  # what moves during the read asks for the next one
        try:
            fresh = read.snapshot(self.project, self.window, self.lock_wait_seconds)
        except RefillError as error:  # a build kept the lock (LockTimeout), or the file
            self.wanted.set()
            busy = isinstance(error, locking.LockTimeout)
            if not busy or isinstance(error, locking.WarehouseOpenElsewhere):
                self.last_error = str(error)
                log.warning("refill board: %s", error)
            return False
        self.last_error = None
        with self._publishing:
            builders = read.live_builders(settings.warehouse_path())
            self._publish(rows.with_builders(fresh, builders, ops.utc_now()) if builders else fresh)
            # counted once its page is served: a reader that sees the count (state.json, a
            # test waiting for the first read) then fetches the page drawn from that read
            self.full_reads += 1
        return True

    def _publish(self, current: Board, static: bool = True) -> None:
        fingerprint = page.fingerprint(current)
        served = page.render_html(current, poll_url=STATE_PATH, fingerprint=fingerprint)
        with self._guard:
            self.board, self.fingerprint, self._page = current, fingerprint, served
        if self.out is not None and static:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self.out.write_text(page.render_html(current), encoding="utf-8")


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return (found.st_mtime_ns, found.st_size)


def _addressed_here(hosts: list[str], served) -> bool:
    """Whether a request's Host names the address the board serves. A page on another site
    can point its own name at 127.0.0.1 (DNS rebinding) and read the answers as its own;
    its requests still carry its name, so only this machine's names for the served port
    (or none, on port 80) are answered. One Host header, exactly."""
    port = served.server_address[1]
    names = {f"{HOST}:{port}", f"localhost:{port}"} | ({HOST, "localhost"} if port == 80 else set())
    return len(hosts) == 1 and hosts[0].strip().lower() in names


def _url(served) -> str:
    host, port = served.server_address[:2]
    return f"http://{host}:{port}/"


def _handler(service: BoardService):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            if not _addressed_here(self.headers.get_all("Host") or [], self.server):
                body = f"misdirected request: the board answers only at {_url(self.server)}\n"
                self._send(421, "text/plain; charset=utf-8", body.encode())
                return
            path = self.path.split("?", 1)[0]
            if path in ("/", "/index.html"):
                self._send(200, "text/html; charset=utf-8", service.page.encode())
            elif path == STATE_PATH:
                self._send(200, "application/json", json.dumps(service.state()).encode())
            elif path == "/favicon.ico":
                self._send(204, "image/x-icon", b"")
            else:
                self._send(404, "text/plain; charset=utf-8", b"not found: the board is at /\n")

        def _send(self, code: int, content_type: str, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):  # noqa: A002 (http.server's signature)
            log.debug("board server: " + format, *args)

    return Handler


@dataclass
class RunningBoard:
    """A board server running in this process's threads."""

    service: BoardService
    server: http.server.ThreadingHTTPServer
    stop_event: threading.Event
    threads: list[threading.Thread]

    @property
    def url(self) -> str:
        return _url(self.server)

    def stop(self) -> None:
        self.stop_event.set()
        self.server.shutdown()
        self.server.server_close()
        for thread in self.threads:
            thread.join(timeout=30)


def start(
    project,
    window: planning.DateRange,
    port: int = 0,
    out: Path | None = None,
    poll_seconds: float = POLL_SECONDS,
) -> RunningBoard:
    """Serve the board on 127.0.0.1:`port` (0: any free port) from background threads."""
    service = BoardService(project, window, out=out)
    try:
        server = http.server.ThreadingHTTPServer((HOST, port), _handler(service))
    except OSError as error:
        raise RefillError(f"cannot serve the board on {HOST}:{port}: {error}") from None
    server.daemon_threads = True
    stop_event = threading.Event()

    def keep_watching() -> None:
        while not stop_event.is_set():
            try:
                service.watch()
            except Exception as error:  # a bad look must not stop the server
                service.last_error = str(error)
                log.warning("refill board: watching failed: %s", error)
            stop_event.wait(poll_seconds)

    def keep_reading() -> None:
        while not stop_event.is_set():
            if not service.wanted.wait(timeout=poll_seconds) or stop_event.is_set():
                continue
            try:
                if service.read():
                    stop_event.wait(SECONDS_BETWEEN_READS)
            except Exception as error:  # a bad read must not stop the server
                service.last_error = str(error)
                log.warning("refill board: reading failed: %s", error)
                stop_event.wait(poll_seconds)

    threads = [
        threading.Thread(target=server.serve_forever, name="board-http", daemon=True),
        threading.Thread(target=keep_watching, name="board-watch", daemon=True),
        threading.Thread(target=keep_reading, name="board-read", daemon=True),
    ]
    for thread in threads:
        thread.start()
    return RunningBoard(service, server, stop_event, threads)


def serve(
    project,
    window: planning.DateRange,
    port: int = settings.BOARD_PORT,
    out: Path | None = None,
    poll_seconds: float = POLL_SECONDS,
) -> None:
    """`refill board --serve`: serve until interrupted (Ctrl-C)."""
    running = start(project, window, port=port, out=out, poll_seconds=poll_seconds)
    print(f"refill board: {running.url} (the page reloads while a run moves)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("refill board: stopped")
    finally:
        running.stop()
