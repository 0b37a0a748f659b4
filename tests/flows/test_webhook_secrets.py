"""Secrets never leave: a webhook that fails, whose URL holds its token, leaves no trace of the
token in ops.notification_outbox, the run's log or the command's output."""

from __future__ import annotations

import http.server
import threading
from datetime import date, timedelta

import pytest

from refill.cli import main
from refill.errors import EXIT_FAILURE
from refill.sample_data import DaySpec, write_days
from refill.warehouse import notify
from tests.helpers import query
from tests.runs import run_backfill

pytestmark = pytest.mark.usefixtures("prefect_harness")

D1 = date(2026, 4, 1)
TOKEN = "T0KEN-a91f3c5d77"
PIECES = ("T0KEN", "a91f3c5d77")  # no piece of it either


class EchoingFailure(http.server.BaseHTTPRequestHandler):
    """Answers 500 with the path it was asked for in its reason, as some proxies do."""

    def do_POST(self):  # noqa: N802 (http.server's name)
        self.send_response(500, f"no hook at {self.path}")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def failing_webhook():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), EchoingFailure)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_a_failing_webhook_leaves_no_trace_of_its_token(
    workspace, failing_webhook, monkeypatch, caplog, capsys
):
    # GIVEN a published day, and quick retries for the notifications
    write_days(workspace.landing, D1, 1, DaySpec(payments=20))
    run_backfill(start=D1, end=D1)
    monkeypatch.setattr(notify, "WEBHOOK_BACKOFF_SECONDS", (0.0,))
    capsys.readouterr()
    printed = ""
    # WHEN daily runs of days not landed yet notify a webhook whose URL holds a token and
    # fails: it answers 500; its token holds a space (pasted from a chat); it has no scheme
    urls = [
        f"{failing_webhook}/hooks/{TOKEN}",
        f"{failing_webhook}/hooks/{TOKEN.replace('-', ' ')}",
        f"hooks.example.com/hooks/{TOKEN}",
    ]
    for number, url in enumerate(urls, start=2):
        monkeypatch.setenv(notify.WEBHOOK_ENV, url)
        with caplog.at_level("INFO"):
            status = main(["daily", "--date", str(D1 + timedelta(days=number)), "--retries", "1"])
        captured = capsys.readouterr()
        printed += captured.out + captured.err
        assert status == EXIT_FAILURE  # not ready

    # THEN every notification failed and is kept, its error said without the token, and
    # neither the outbox, the log nor the command's output holds any piece of the token
    rows = query(
        workspace.warehouse,
        "select message, last_error from ops.notification_outbox where sent_at is null",
    )
    errors = [error for _, error in rows if error is not None]
    assert len(errors) >= len(urls), rows
    assert caplog.text.count("webhook delivery of") >= len(urls)  # the log says it failed
    for piece in PIECES:
        assert not [row for row in rows if piece in " ".join(map(str, row))], rows
        assert piece not in caplog.text
        assert piece not in printed
