"""The board in a real browser: headless Chromium opens it from disk and from `--serve`, with
no console error and no request off the page, and finds every row and lamp in the DOM.

Chromium is driven over its DevTools protocol with `websockets` (already installed with
Prefect). Outside CI the tests skip when Chromium is missing; in CI (CI=true) they fail,
because .ci/run installs it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from refill.errors import RefillError
from refill.rules import planning
from refill.sample_data import DaySpec, write_day
from refill.views.board import server as board_server
from refill.warehouse.dbt_runner import shared_project
from tests.board.page import SPEC, d, render, run_daily
from tests.runs import run_backfill

pytestmark = pytest.mark.usefixtures("prefect_harness")

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = [
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-port=0",
    "--remote-allow-origins=*",
]


@pytest.fixture
def chromium() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("chromium is missing in CI: .ci/run installs it (apt-get install chromium)")
    pytest.skip("chromium is not installed (Debian: apt-get install chromium); CI runs this test")


class Browser:
    """Headless Chromium over the DevTools protocol: navigation, console, network, DOM."""

    def __init__(self, binary: str, profile: Path):
        from websockets.sync.client import connect

        profile.mkdir(parents=True, exist_ok=True)
        command = [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.events: list[dict] = []
        self._next_id = 0
        try:
            port = self._devtools_port(profile / "DevToolsActivePort")
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
                targets = json.load(r)
            page = next(target for target in targets if target["type"] == "page")
            self.socket = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=30)
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable")
        except BaseException:
            self.process.kill()
            raise

    def _devtools_port(self, port_file: Path) -> int:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with status {self.process.returncode}")
            if port_file.exists() and port_file.read_text().strip():
                return int(port_file.read_text().split()[0])
            time.sleep(0.05)
        raise RuntimeError("chromium did not open its DevTools port within 30s")

    def _receive(self, timeout: float) -> dict:
        message = json.loads(self.socket.recv(timeout=timeout))
        if "method" in message:
            self.events.append(message)
        return message

    def call(self, method: str, **params) -> dict:
        self._next_id += 1
        number = self._next_id
        self.socket.send(json.dumps({"id": number, "method": method, "params": params}))
        while True:
            message = self._receive(timeout=60)
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def wait_for_event(self, name: str, seconds: float = 30) -> dict:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                message = self._receive(timeout=max(deadline - time.monotonic(), 0.01))
            except TimeoutError:
                break
            if message.get("method") == name:
                return message
        raise AssertionError(f"no {name} within {seconds}s")

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, expression: str):
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_until(self, expression: str, seconds: float = 30):
        """Poll `expression` until it is truthy; a page reloading meanwhile is no failure."""
        guarded = (
            f"(function () {{ try {{ return {expression}; }} catch (e) {{ return null; }} }})()"
        )
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(guarded)
            except (AssertionError, RuntimeError):
                value = None  # the page is between two documents
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"{expression} stayed false for {seconds}s")

    def console_errors(self) -> list[str]:
        errors = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                errors.append(" ".join(str(a.get("value")) for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                errors.append(params["exceptionDetails"].get("text", "exception"))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                errors.append(f"{params['entry']['text']} {params['entry'].get('url', '')}")
        return errors

    def requested_urls(self) -> list[str]:
        return [
            event["params"]["request"]["url"]
            for event in self.events
            if event["method"] == "Network.requestWillBeSent"
        ]

    def screenshot(self, path: Path, width: int = 1400) -> bytes:
        """The whole page at `width` pixels, as PNG bytes (also written to `path`)."""
        metrics = {"width": width, "deviceScaleFactor": 1, "mobile": False}
        self.call("Emulation.setDeviceMetricsOverride", height=200, **metrics)
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        self.call("Emulation.setDeviceMetricsOverride", height=height, **metrics)
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        data = base64.b64decode(shot["data"])
        path.write_bytes(data)
        return data

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def browser(chromium, tmp_path):
    opened = Browser(chromium, tmp_path / "chromium-profile")
    yield opened
    opened.close()


ROWS_AND_LAMPS = """
Array.from(document.querySelectorAll("tr[data-day]")).map(function (row) {
  return {
    day: row.dataset.day,
    lamps: Array.from(row.querySelectorAll(".lamp[data-step]")).map(function (lamp) {
      var box = lamp.getBoundingClientRect();
      return {step: lamp.dataset.step, state: lamp.dataset.state, title: lamp.title,
              visible: box.width > 0 && box.height > 0};
    })
  };
})
"""


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_the_board_opens_in_chromium_with_its_rows_and_lamps_and_no_errors(
    workspace, tmp_path, browser
):
    # GIVEN a board of three days: published, published with a six-hour hole, not landed
    write_day(workspace.landing, d(1), SPEC)
    write_day(workspace.landing, d(2), DaySpec(payments=400, outage_hours=(8, 14)))
    write_day(workspace.landing, d(3), DaySpec(payments=150, write_manifest=False))
    run_backfill(start=d(1), end=d(3), on_missing="skip")
    with pytest.raises(RefillError, match="not ready"):
        run_daily(d(3))
    page = tmp_path / "board.html"
    render(page, d(1), d(3))

    # WHEN headless Chromium opens the file and takes a screenshot
    browser.open(page.as_uri())
    shot = browser.screenshot(tmp_path / "board.png")

    # THEN the page loaded, every row has its four lamps, drawn, with a reason on hover
    assert browser.evaluate("document.readyState") == "complete"
    rows = browser.evaluate(ROWS_AND_LAMPS)
    assert [row["day"] for row in rows] == [str(d(n)) for n in (1, 2, 3)]
    for row in rows:
        assert [lamp["step"] for lamp in row["lamps"]] == [
            "ready",
            "building",
            "audited",
            "published",
        ]
        assert all(lamp["visible"] and lamp["title"] for lamp in row["lamps"])
    assert [lamp["state"] for lamp in rows[0]["lamps"]] == ["on"] * 4
    assert [lamp["state"] for lamp in rows[2]["lamps"]] == ["failed", "off", "off", "off"]
    assert "no _SUCCESS manifest" in rows[2]["lamps"][0]["title"]
    assert browser.evaluate("document.querySelector('svg.strip[data-holes=\"6\"]') !== null")
    # AND nothing went wrong, and nothing was fetched but the page itself
    assert browser.console_errors() == []
    assert all(url.startswith(("file://", "data:")) for url in browser.requested_urls())
    # AND the screenshot is the whole page
    width, height = png_size(shot)
    assert width == 1400 and height >= 400 and len(shot) > 20_000

    # WHEN only the days that need attention are asked for
    browser.evaluate("document.getElementById('only-attention').click()")

    # THEN the published days are hidden, the unready one stays
    visible = browser.evaluate(
        "Array.from(document.querySelectorAll('tr[data-day]'))"
        ".filter(function (r) { return r.offsetParent !== null; })"
        ".map(function (r) { return r.dataset.day; })"
    )
    assert visible == [str(d(3))]
    assert browser.console_errors() == []


def test_the_served_board_reloads_itself_when_a_file_lands(workspace, browser):
    # GIVEN a served board of two days, the second not landed yet
    write_day(workspace.landing, d(1), SPEC)
    run_backfill(start=d(1), end=d(1))
    running = board_server.start(
        shared_project(), planning.DateRange(d(1), d(2)), port=0, poll_seconds=0.2
    )
    try:
        deadline = time.monotonic() + 30
        while running.service.full_reads < 1 and time.monotonic() < deadline:
            time.sleep(0.1)

        # WHEN Chromium opens it and the page polls its server once
        browser.open(running.url)
        second_ready = 'document.querySelector(\'tr[data-day="%s"] .lamp[data-step="ready"]\')'
        assert browser.evaluate(second_ready % d(2) + ".dataset.state") == "off"
        browser.wait_until("document.getElementById('live').textContent.indexOf('checked') >= 0")

        # AND the second day's file lands
        write_day(workspace.landing, d(2), SPEC)

        # THEN the page reloads itself and lights the second day's ready lamp
        browser.wait_until(second_ready % d(2) + ".dataset.state === 'on'", seconds=30)

        # AND there was no console error, and no request but to the board's own server
        assert browser.console_errors() == []
        assert all(url.startswith(running.url) for url in browser.requested_urls())
    finally:
        running.stop()
