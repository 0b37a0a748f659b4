"""Webhook delivery has a total deadline per attempt, whatever the server does.

urllib's timeout bounds each read, not the request: a server that sends a header line every
few seconds kept one delivery busy for as long as it liked (the webhook deadline). These
tests talk to a real local server that does exactly that.
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from datetime import date

import pytest

from refill.warehouse import notify

TRICKLE_SECONDS = 4.0  # under the per-read timeout: each read gets a byte in time
TRICKLE_FOR_SECONDS = 40.0  # then the server finishes its answer (200 OK)


class TricklingServer:
    """Answers every request `200 OK`, one header line every TRICKLE_SECONDS, for
    TRICKLE_FOR_SECONDS, then ends the headers: a complete, successful answer, very late."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.stop = threading.Event()
        self.requests = 0
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        self.requests += 1
        with connection:
            try:
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\r\n")
                started = time.monotonic()
                line = 0
                while time.monotonic() - started < TRICKLE_FOR_SECONDS:
                    if self.stop.wait(TRICKLE_SECONDS):
                        return
                    line += 1
                    connection.sendall(f"X-Trickle-{line}: still coming\r\n".encode())
                connection.sendall(b"Content-Length: 0\r\n\r\n")
            except OSError:  # the client gave up
                return

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


@pytest.fixture
def trickling(monkeypatch):
    server = TricklingServer()
    monkeypatch.setenv(notify.WEBHOOK_ENV, server.url)
    yield server
    server.close()


def pending(number: int, attempts_used: int) -> notify.Pending:
    return notify.Pending(
        f"daily:2026-01-0{number}:failed:v1",
        "daily",
        date(2026, 1, number),
        "failed",
        "v1",
        f"daily 2026-01-0{number}: failed",
        attempts_used,
    )


def test_a_trickling_webhook_holds_one_delivery_no_longer_than_its_deadline(trickling):
    # GIVEN a webhook that trickles a header line every 4 s, and a notification with one
    # delivery attempt left
    row = pending(1, notify.MAX_DELIVERY_ATTEMPTS - 1)

    # WHEN it is delivered
    started = time.monotonic()
    (delivery,) = notify.deliver([row])
    seconds = time.monotonic() - started

    # THEN the attempt gives up at its total deadline, with the reason, and stays unsent
    assert seconds < notify.WEBHOOK_TIMEOUT_SECONDS + 1.5, seconds
    assert delivery.error is not None and "no answer within" in delivery.error
    assert (delivery.tries, trickling.requests) == (1, 1)


def test_a_run_s_deliveries_to_a_trickling_webhook_stop_at_the_run_s_budget(trickling, monkeypatch):
    # GIVEN a webhook that trickles, two pending notifications with every try left, and a
    # run budget of 7 s for all its deliveries
    monkeypatch.setattr(notify, "DELIVERY_BUDGET_SECONDS", 7)

    # WHEN the run delivers them
    started = time.monotonic()
    deliveries = notify.deliver([pending(1, 0), pending(2, 0)])
    seconds = time.monotonic() - started

    # THEN it is done within the budget (plus one backoff), and both are kept for later
    assert seconds < 7 + max(notify.WEBHOOK_BACKOFF_SECONDS) + 1.5, seconds
    assert [delivery.error is not None for delivery in deliveries] == [True, True]


def test_a_prompt_webhook_gets_each_notification_once_with_its_key(monkeypatch):
    # GIVEN a webhook that answers at once
    received = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            received.append((self.headers["Idempotency-Key"], body["idempotency_key"]))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv(notify.WEBHOOK_ENV, f"http://127.0.0.1:{server.server_port}/hook")
    try:
        # WHEN two notifications are delivered
        deliveries = notify.deliver([pending(1, 0), pending(2, 0)])
    finally:
        server.shutdown()
        server.server_close()

    # THEN both are delivered on the first try, each with its key
    assert [(d.error, d.tries) for d in deliveries] == [(None, 1), (None, 1)]
    assert received == [(row.idempotency_key,) * 2 for row in (pending(1, 0), pending(2, 0))]


SECRET_TOKEN = "xoxb-55d1c0de7a"


class FailingWebhook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        self.send_response(500, f"no such hook {self.path}")  # a server that echoes the path
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def failing_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FailingWebhook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_port
    server.shutdown()
    server.server_close()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens there once the probe closes


@pytest.mark.parametrize(
    "webhook",
    [
        "answers 500",
        "refuses the connection",
        "holds a space in its token",
        "holds a newline in its token",
        "has no scheme",
    ],
)
def test_a_failing_webhook_s_error_and_log_say_nothing_of_its_token(
    webhook, failing_server, monkeypatch, caplog
):
    # GIVEN a webhook URL with a token in its path, which fails one way or another
    port = failing_server if webhook == "answers 500" else closed_port()
    token = {
        "holds a space in its token": SECRET_TOKEN.replace("-", " "),
        "holds a newline in its token": SECRET_TOKEN.replace("-", "\n"),
    }.get(webhook, SECRET_TOKEN)
    url = f"http://127.0.0.1:{port}/hooks/{token}"
    if webhook == "has no scheme":
        url = f"hooks.example.com/hooks/{token}"
    monkeypatch.setenv(notify.WEBHOOK_ENV, url)
    monkeypatch.setattr(notify, "WEBHOOK_BACKOFF_SECONDS", (0.0,))

    # WHEN a notification is delivered to it
    with caplog.at_level("DEBUG"):
        (delivery,) = notify.deliver([pending(1, 0)])

    # THEN it failed, and neither its error (ops.notification_outbox.last_error) nor the
    # log holds the token, or any piece of it
    assert delivery.error is not None
    for piece in ("xoxb", "55d1c0de7a"):
        assert piece not in delivery.error and piece not in caplog.text
    if webhook != "has no scheme":
        assert "127.0.0.1" in caplog.text  # the host is named
