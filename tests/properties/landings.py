"""Hypothesis strategies for landings: part files of every kind, and days whose manifest
fields, file names and file kinds are arbitrary. Shared by the properties of this folder.

Nothing here decides what refill should do with what it draws: the oracle
(tests.helpers.expected_day, over bytes) and the properties' own checks do.
"""

from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from hypothesis import strategies as st

from harness.hostile import write_special_part
from refill.rules.readiness import PLAIN_LINE_MAX_BYTES, day_folder
from refill.sample_data import DATASET, MARKET_CURRENCY, payment_line

FIRST_DAY = date(2025, 5, 5)

# -- part files of every kind ------------------------------------------------------------

# How a part file's bytes are written from its lines. "plain" and "crlf" (every line ended
# alike) are what the streaming reader takes; every other kind is one the text check sends
# to the exact reader (or, like empty lines and a missing final newline, a streamed file's
# edge).
FILE_KINDS = (
    "plain",
    "crlf",
    "crlf_no_final_newline",
    "mixed_endings",
    "cr_before_crlf",
    "lone_cr",
    "bom",
    "not_utf8",
    "nul",
    "empty_lines",
    "no_final_newline",
    "empty",
    "long_line",
)
MALFORMED_LINES = (
    b"not json",
    b"[1, 2, 3]",
    b"{}",
    b'{"transaction_id": ""}',
    b'{"transaction_id": "tx-cut", "amount": 1',
    b"",
)
AMOUNTS = (1, 10, 12.5, 99.99, 1234.56, 0.01)


@st.composite
def day_lines(draw, day: date) -> list[bytes]:
    """A day's lines: payments over a small id space (so replays and conflicting versions
    happen), with valid and invalid markets and currencies, and malformed lines."""
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 4)) == 0:
            lines.append(draw(st.sampled_from(MALFORMED_LINES)))
            continue
        market = draw(st.sampled_from([*MARKET_CURRENCY, "ZZ"]))
        currency = MARKET_CURRENCY.get(market, "USD") if draw(st.booleans()) else "XXX"
        line = payment_line(
            day,
            draw(st.integers(0, 3)),
            amount=draw(st.sampled_from(AMOUNTS)),
            market=market,
            currency=currency,
        )
        lines.append(line.encode())
    return lines


def file_bytes(kind: str, lines: list[bytes], day: date) -> bytes:
    """The part file of `kind` holding `lines`."""
    if kind == "empty":
        return b""
    if kind == "crlf":
        return b"".join(line + b"\r\n" for line in lines)
    if kind == "crlf_no_final_newline":
        return b"\r\n".join(lines)
    if kind == "mixed_endings":  # LF and CRLF in one file: the exact reader's
        return b"".join(line + (b"\r\n" if n % 2 else b"\n") for n, line in enumerate(lines))
    if kind == "cr_before_crlf":  # a line ended by CR CR LF: both CRs are dropped
        return b"".join(line + (b"\r\r\n" if n == 0 else b"\r\n") for n, line in enumerate(lines))
    if kind == "no_final_newline":
        return b"\n".join(lines)
    changed = list(lines)
    if kind == "lone_cr":  # a carriage return inside a line, where JSON allows whitespace
        changed = [line.replace(b", ", b",\r ", 1) for line in changed] + [b"\r"]
    elif kind == "bom":
        changed[0] = b"\xef\xbb\xbf" + changed[0]
    elif kind == "not_utf8":
        changed.append(payment_line(day, 7).encode().replace(b'"DE"', b'"D\xe9\xc3"'))
    elif kind == "nul":
        changed.append(changed[0] + b"\x00")
    elif kind == "empty_lines":
        changed = [piece for line in changed for piece in (line, b"")]
    elif kind == "long_line":  # a valid payment whose line is over the plain reader's limit
        note = "x" * (PLAIN_LINE_MAX_BYTES + 16)
        changed.append(payment_line(day, 8, note=note).encode())
    return b"".join(line + b"\n" for line in changed)


@dataclass
class Window:
    """Days from FIRST_DAY, each a list of (kind, bytes) part files."""

    days: list[list[tuple[str, bytes]]]

    @property
    def dates(self) -> list[date]:
        return [FIRST_DAY + timedelta(days=n) for n in range(len(self.days))]

    @property
    def kinds(self) -> list[str]:
        return [kind for files in self.days for kind, _ in files]


@st.composite
def windows(draw, max_days: int = 3, max_files: int = 3) -> Window:
    """A window of 1 to `max_days` days of 1 to `max_files` part files each. Half the time
    every file of the window is of one kind (the shape that found the "withfiles" bug: a
    window whose every file was CRLF rendered invalid SQL); else each file draws its own."""
    uniform = draw(st.one_of(st.none(), st.sampled_from(FILE_KINDS)))
    days = []
    for offset in range(draw(st.integers(1, max_days))):
        day = FIRST_DAY + timedelta(days=offset)
        files = []
        for _ in range(draw(st.integers(1, max_files))):
            kind = uniform or draw(st.sampled_from(FILE_KINDS))
            files.append((kind, file_bytes(kind, draw(day_lines(day)), day)))
        days.append(files)
    return Window(days)


def lines_in(data: bytes) -> int:
    """The oracle's line count: pieces between newlines, a final newline ending the last."""
    pieces = data.split(b"\n")
    return len(pieces) - (1 if data.endswith(b"\n") or not data else 0)


def land_window(landing: Path, window: Window) -> None:
    """Write the window's days, each with a manifest that agrees with its files."""
    for day, files in zip(window.dates, window.days, strict=True):
        folder = day_folder(landing, DATASET, day)
        folder.mkdir(parents=True)
        for index, (_, content) in enumerate(files):
            (folder / f"part-{index:04d}.jsonl").write_bytes(content)
        manifest = {
            "dt": day.isoformat(),
            "files": len(files),
            "records": sum(lines_in(content) for _, content in files),
            "exported_at": f"{day + timedelta(days=1)}T02:13:00Z",
        }
        (folder / "_SUCCESS").write_text(json.dumps(manifest))


# -- arbitrary days: manifest fields, names, kinds ------------------------------------------

OUTSIDE_MARKER = "OUTSIDE-THE-LANDING-7f3a"
# "regular", or a kind of refill.sample_data.SPECIAL_PART_FILES (no socket: its path must be
# short, and a test's temporary folder need not be)
SPECIAL_KINDS = ("symlink outside", "symlink inside", "fifo", "folder", "hard link outside")
SPECIAL_KINDS += ("broken symlink",)
_NAME_ALPHABET = st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",))
_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=5,
)


@st.composite
def part_names(draw) -> str:
    """A name a part file could have: valid, part-*.jsonl with anything in it, or anything."""
    numbered = draw(st.booleans())  # half the time (and when shrinking) part-000N.jsonl
    choice = "numbered" if numbered else draw(st.sampled_from(["valid", "part-*.jsonl", "any"]))
    if choice == "numbered":
        return f"part-{draw(st.integers(0, 3)):04d}.jsonl"
    if choice == "valid":
        return f"part-{draw(st.from_regex(r'[A-Za-z0-9_-]{1,8}', fullmatch=True))}.jsonl"
    if choice == "part-*.jsonl":
        return f"part-{draw(st.text(_NAME_ALPHABET, min_size=1, max_size=12))}.jsonl"
    return draw(
        st.text(_NAME_ALPHABET, min_size=1, max_size=20).filter(lambda n: n not in (".", ".."))
    )


@st.composite
def manifest_values(draw, day: date, files: int, records: int) -> bytes:
    """A manifest: arbitrary bytes, arbitrary JSON, or the agreeing one with any field
    replaced by an arbitrary value, dropped, or kept, and extra fields."""
    # Hypothesis draws and shrinks towards the first choice: the agreeing manifest
    few = draw(st.booleans())  # half the time (and when shrinking) the agreeing one, nearly
    shape = (
        "few changes" if few else draw(st.sampled_from(["many changes", "any JSON", "any bytes"]))
    )
    if shape == "any bytes":
        return draw(st.binary(max_size=60))
    if shape == "any JSON":
        return json.dumps(draw(_JSON_VALUES)).encode()
    agreeing = {
        "dt": day.isoformat(),
        "files": files,
        "records": records,
        "exported_at": f"{day + timedelta(days=1)}T02:13:00Z",
    }
    manifest = dict(agreeing)
    for name in list(agreeing):  # each field changed half the time, or one time in eight
        changed = draw(st.booleans()) and (
            shape == "many changes" or (draw(st.booleans()) and draw(st.booleans()))
        )
        change = draw(st.sampled_from(["drop", "any value", "text around it"])) if changed else ""
        if change == "drop":
            manifest.pop(name)
        elif change == "any value":
            manifest[name] = draw(_JSON_VALUES)
        elif change == "text around it" and isinstance(agreeing[name], str):
            text = draw(st.text(max_size=12))
            manifest[name] = draw(st.sampled_from([agreeing[name] + text, text + agreeing[name]]))
    if draw(st.booleans()):
        manifest[draw(st.text(max_size=8))] = draw(_JSON_VALUES)
    return (
        json.dumps(manifest).encode()
        if draw(st.booleans())
        else json.dumps(manifest, ensure_ascii=False).encode()
    )


@dataclass
class Entry:
    name: str
    kind: str  # "regular" or one of SPECIAL_KINDS
    content: bytes = b""


@dataclass
class ArbitraryDay:
    day: date
    entries: list[Entry]
    manifest: bytes | None  # None: no _SUCCESS
    extra_folders: list[str] = field(default_factory=list)


@st.composite
def arbitrary_days(draw, day: date = FIRST_DAY) -> ArbitraryDay:
    """One day's folder with arbitrary names, kinds and contents, and its manifest."""
    entries, seen = [], set()
    for _ in range(draw(st.integers(0, 4))):
        name = draw(part_names())
        if name in seen or name == "_SUCCESS":
            continue
        seen.add(name)
        lines = draw(day_lines(day))
        special = draw(st.booleans()) and draw(st.booleans())  # one in four; shrinks to regular
        kind = draw(st.sampled_from(SPECIAL_KINDS)) if special else "regular"
        entries.append(Entry(name, kind, file_bytes(draw(st.sampled_from(FILE_KINDS)), lines, day)))
    # The manifest's counts: of the regular files, as an honest exporter writes them; or of
    # every entry named like a part file, counting what a link reads (the outside file's one
    # line), as the symlinked part file attack raised them so that only the files' kinds are wrong.
    if draw(st.booleans()):
        counted = [e for e in entries if e.kind == "regular"]
    else:
        counted = [e for e in entries if fnmatch.fnmatchcase(e.name, "part-*.jsonl")]
    records = sum(_apparent_lines(e) for e in counted)
    manifest = (
        None if draw(st.integers(0, 9)) == 0 else draw(manifest_values(day, len(counted), records))
    )
    extra = draw(st.lists(st.text(_NAME_ALPHABET, min_size=1, max_size=10), max_size=2))
    extra = [name for name in extra if name not in seen | {".", "..", "_SUCCESS"}]
    return ArbitraryDay(day, entries, manifest, sorted(set(extra)))


def _apparent_lines(entry: Entry) -> int:
    """The lines an entry reads as when links are followed: a link to the outside file (or
    to a copy of it) reads its one line; a FIFO, a folder or a broken link none."""
    if entry.kind == "regular":
        return lines_in(entry.content)
    return 1 if entry.kind in ("symlink outside", "symlink inside", "hard link outside") else 0


def outside_file(landing: Path) -> Path:
    """A file outside the landing, holding a line a reader must never see."""
    outside = landing.parent / "outside" / "secret.jsonl"
    outside.parent.mkdir(exist_ok=True)
    outside.write_text(json.dumps({"transaction_id": OUTSIDE_MARKER}) + "\n")
    return outside


def land_arbitrary_day(landing: Path, arbitrary: ArbitraryDay) -> Path:
    """Write the day's folder; returns it. A name the file system refuses is skipped."""
    folder = day_folder(landing, DATASET, arbitrary.day)
    folder.mkdir(parents=True)
    outside = outside_file(landing)
    for entry in arbitrary.entries:
        path = folder / entry.name
        try:
            if entry.kind == "regular":
                path.write_bytes(entry.content)
            else:
                write_special_part(path, entry.kind, outside)
        except OSError:  # a name too long for the file system, say
            continue
    for name in arbitrary.extra_folders:
        try:
            (folder / name).mkdir()
        except OSError:
            continue
    if arbitrary.manifest is not None:
        (folder / "_SUCCESS").write_bytes(arbitrary.manifest)
    return folder


def is_regular_single_file(path: Path) -> bool:
    """Independent of refill's rule: a regular file, not a link, with one name."""
    facts = os.lstat(path)
    return (facts.st_mode & 0o170000) == 0o100000 and facts.st_nlink == 1
