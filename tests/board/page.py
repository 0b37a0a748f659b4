"""The board page as a reader sees it, and the runs the board tests plant: shared by the
board's server-side and browser tests."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from datetime import date, timedelta
from html.parser import HTMLParser
from pathlib import Path

from flows.daily import daily
from flows.tasks import run_flow
from refill.cli import board
from refill.sample_data import DaySpec
from refill.views.board import model

W1 = date(2026, 3, 2)  # a Monday
SPEC = DaySpec(payments=150)


def d(n: int) -> date:
    return W1 + timedelta(days=n - 1)


def run_daily(day: date, **parameters):
    settings = {"wait_for_ready_seconds": 0, "retries": 2, "retry_delay_seconds": [0]}
    return run_flow(daily, logical_date=day, **{**settings, **parameters})


# -- reading the page back ----------------------------------------------------------------------


@dataclass
class PageRow:
    day: str
    state: str
    lamps: dict[str, tuple[str, str]] = field(default_factory=dict)  # step -> (state, hover)
    cells: dict[str, str] = field(default_factory=dict)  # data-col -> text
    flags: dict[str, str] = field(default_factory=dict)  # name -> hover
    hole_hours: int = 0
    versions: dict[int, tuple[str, bool]] = field(default_factory=dict)  # v -> (text, served)

    def lamp_states(self) -> list[str]:
        return [self.lamps[step][0] for step in model.STEPS]


VOID_ELEMENTS = {"br", "hr", "img", "input", "link", "meta"}


class BoardPage(HTMLParser):
    """The rows, lamps, flags and headlines of a rendered board, as a reader sees them."""

    def __init__(self, text: str):
        super().__init__()
        self.rows: dict[str, PageRow] = {}
        self.data_as_of: list[str] = []
        self.marts: dict[str, dict] = {}
        self.banner = ""
        self.body: dict[str, str] = {}
        self._row: PageRow | None = None
        self._capture: tuple[str, object] | None = None
        self._text: list[str] = []
        self._depth = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if tag == "body":
            self.body = {k: v or "" for k, v in attributes.items()}
        if tag == "tr" and "data-day" in attributes:
            self._row = PageRow(attributes["data-day"], attributes["data-state"])
            self.rows[self._row.day] = self._row
        if self._capture is not None:
            self._depth += tag not in VOID_ELEMENTS
            return
        row = self._row
        if tag == "span" and "lamp" in classes and row is not None:
            row.lamps[attributes["data-step"]] = (attributes["data-state"], attributes["title"])
        elif tag == "td" and "data-col" in attributes and row is not None:
            self._start(("cell", attributes["data-col"]))
        elif tag == "span" and "flag" in classes and row is not None:
            self._start(("flag", attributes["title"]))
        elif tag == "svg" and "strip" in classes and row is not None:
            row.hole_hours = int(attributes["data-holes"])
        elif tag == "div" and "ver" in classes and row is not None:
            self._start(("version", (int(attributes["data-version"]), "served" in classes)))
        elif tag == "section" and "data-as-of" in attributes:
            self._start(("asof", None))
        elif tag == "li" and "data-mart" in attributes:
            self.marts[attributes["data-mart"]] = dict(attributes)
            self._start(("mart", attributes["data-mart"]))
        elif tag == "div" and "banner" in classes:
            self._start(("banner", None))

    def _start(self, what):
        self._capture, self._text, self._depth = what, [], 0

    def handle_data(self, data):
        if self._capture is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "tr":
            self._row = None
        if self._capture is None:
            return
        if self._depth:
            self._depth -= 1
            return
        kind, key = self._capture
        text = " ".join("".join(self._text).split())
        self._capture = None
        if kind == "cell":
            self._row.cells[key] = text
        elif kind == "flag":
            self._row.flags[text] = key
        elif kind == "version":
            version, served = key
            self._row.versions[version] = (text, served)
        elif kind == "asof":
            self.data_as_of += [
                f"data as of: {line.strip()}" for line in text.split("data as of:")[1:]
            ]
        elif kind == "mart":
            self.marts[key]["text"] = text
        elif kind == "banner":
            self.banner += text


def render(out: Path, start: date, end: date) -> BoardPage:
    """`refill board --start --end --out`, and the page it wrote."""
    parser = argparse.ArgumentParser()
    board.add_arguments(parser)
    args = parser.parse_args(["--start", str(start), "--end", str(end), "--out", str(out)])
    assert board.main(args) == 0
    return BoardPage(out.read_text())
