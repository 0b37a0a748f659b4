"""The served board answers only requests addressed to it.

A page on another site can make the browser send requests to 127.0.0.1 under its own name
(DNS rebinding: evil.example resolves to 127.0.0.1 after the page loaded), and read the
answers as its own. The Host header tells: the board serves only requests whose Host is the
address it serves. Real requests to a real server here.
"""

from __future__ import annotations

import http.client
import http.server
import threading

import pytest

from refill.views.board import server as board_server


class CountingService:
    """Stands in for BoardService: counts every read of the page and of its state."""

    def __init__(self):
        self.reads = 0

    @property
    def page(self) -> str:
        self.reads += 1
        return "<html>board page: run ids, paths, messages</html>"

    def state(self) -> dict:
        self.reads += 1
        return {"fingerprint": "f"}


@pytest.fixture
def served():
    service = CountingService()
    server = http.server.ThreadingHTTPServer((board_server.HOST, 0), board_server._handler(service))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield service, server.server_address[1]
    server.shutdown()
    server.server_close()


def get(port: int, path: str, host: str | None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(board_server.HOST, port, timeout=10)
    connection.putrequest("GET", path, skip_host=True)
    if host is not None:
        connection.putheader("Host", host)
    connection.endheaders()
    response = connection.getresponse()
    try:
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("path", ["/", "/state.json"])
@pytest.mark.parametrize(
    "host",
    [
        "evil.example:{port}",
        "evil.example",
        "127.0.0.1.evil.example:{port}",
        "127.0.0.1:{other}",
        "127.0.0.1",
        "",
        None,
    ],
)
def test_a_request_for_another_host_is_refused_and_reads_nothing(served, path, host):
    # GIVEN the board served on 127.0.0.1
    service, port = served

    # WHEN a request names another host (a rebinding page's), another port, or none
    status, body = get(port, path, host and host.format(port=port, other=port + 1))

    # THEN it is refused with 421, and the board was not read
    assert status == 421
    assert b"board page" not in body and b"fingerprint" not in body
    assert service.reads == 0


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_a_request_for_the_served_address_is_answered(served, host):
    # GIVEN the board served on 127.0.0.1
    service, port = served

    # WHEN the page and its state are asked for under the served address
    page = get(port, "/", host.format(port=port))
    state = get(port, "/state.json", host.format(port=port))

    # THEN both are answered
    assert page == (200, b"<html>board page: run ids, paths, messages</html>")
    assert state == (200, b'{"fingerprint": "f"}')
    assert service.reads == 2
