"""The readiness rule: when a landed day may be computed. Its one home.

dbt calls it through a DuckDB function that `refill.warehouse.dbt_plugin` registers (the
staging model refuses a window with an unready day); on Spark the engine runs it in a
process of its own (refill.warehouse.spark_readiness); the Prefect flows call it
directly before they build or while they wait for a late file.

A day is ready only when its `_SUCCESS` manifest exists, parses, names the day,
and agrees with the part files it describes: the number of files and the number
of lines (every line, malformed or not, is a record).

It is also the input boundary: the one definition of a valid manifest and of a valid
part-file name. Every manifest field staging uses is checked here for its JSON type
and format (`MANIFEST_FIELDS`), every part file's name against `PART_NAME`, and a
value that fails makes the day not ready with a one-line reason naming the field.
Every file it reads (the manifest and the part files) must be a regular file inside
the landing (refill/rules/landed_files.py): a symbolic link, a FIFO, a socket, a device,
a folder named like a part file or a file with a second hard link makes the day not
ready, naming the file.
What a ready verdict carries is therefore safe to use: dbt reads the verdicts as JSON
the engine parses itself (a dataset's `stg_<dataset>__manifests`), never as SQL text.

One process asks about the same day several times (the plan, dbt's gate in each
chunk, the board at the end); the per-file work, a line count and a hash, is
memoized by the file's identity, so an unchanged file is read once per process
and a rewritten one is always read again.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import hashlib
import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path, PurePosixPath

from refill.rules.landed_files import (
    MANIFEST_NAME,
    LandedFileProblem,
    folder_problem,
    hold_for_reading,
    judged_identity,
    lstat_problem,
    open_landed_file,
    read_landed_file,
    record_judged,
    unreadable,
)

PART_GLOB = "part-*.jsonl"
_DT_FOLDER = re.compile(r"dt=(\d{4}-\d{2}-\d{2})", re.ASCII)  # whole name (fullmatch)
# A part file's name: no quote, glob character, path separator or space can be in it.
# Its path becomes a file name the engine reads (quoted once more by refill_string_literal).
PART_NAME = re.compile(r"part-[A-Za-z0-9_-]{1,64}\.jsonl")  # whole name (fullmatch)
PART_NAME_RULE = "part-<1 to 64 letters, digits, - or _>.jsonl"
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
# exported_at: ISO-8601 in UTC, to the second or to the microsecond (what the warehouse's
# timestamp holds), `Z` or `+00:00`. Staging reads it as the canonical form below.
_EXPORTED_AT = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,6})?(Z|\+00:00)", re.ASCII)
EXPORTED_AT_RULE = "an ISO-8601 UTC time, YYYY-MM-DDTHH:MM:SS[.ffffff]Z"
_MAX_COUNT = 2**63 - 1  # the warehouse's bigint
MANIFEST_FIELDS = ("dt", "files", "records", "exported_at")
# A landing root becomes a path the engine reads: glob characters would make it a pattern.
_LANDING_ROOT_FORBIDDEN = re.compile(r"[*?\[\]{}\\\x00-\x1f\x7f]")
# A file changed this recently may still be changing within the file system's clock
# granularity (a rewrite of the same size in the same tick keeps its mtime): it is read
# again on every call until it is older than this, as git treats "racily clean" files.
SETTLED_NS = 2_000_000_000
SUMMARY_BLOCK_BYTES = 1 << 20  # a part file is counted and hashed a block at a time
# Bytes that make a part file not text the engine's line reader can stream (see
# PartSummary.line_ending): the byte it takes for a column separator, and NUL. A carriage
# return is streamable only as the first byte of every CRLF (a line reader ends a line at a
# lone one, the row rule does not; it refuses a file mixing LF and CRLF).
_NOT_TEXT_BYTES = (b"\x1f", b"\x00")
# The longest line a plain file may hold, newline included: the engine's line reader refuses
# lines over 2 MiB by default. At least SUMMARY_BLOCK_BYTES, so only a line that crosses a
# block boundary can be longer (see _summarize).
PLAIN_LINE_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class DayReadiness:
    """The verdict for one landed day, and what the manifest says about it."""

    day: date
    is_ready: bool
    reason: str  # "ready", or why not, in words an on-call engineer can act on
    part_files: list[str] = field(default_factory=list)  # relative to the landing root
    manifest_files: int | None = None
    manifest_records: int | None = None
    exported_at: str | None = None
    source_fingerprint: str | None = None

    def to_json(self) -> dict:
        data = asdict(self)
        data["day"] = self.day.isoformat()
        return data


def count_lines(data: bytes) -> int:
    """Lines as the manifest counts them: a final line without a newline still counts."""
    return _line_count(data.count(b"\n"), data[-1:])


def _line_count(newlines: int, last_byte: bytes) -> int:
    """The manifest's line count from a file's newlines and its last byte (b"" when empty)."""
    return newlines + (0 if last_byte in (b"", b"\n") else 1)


def day_folder(landing_root: Path, dataset: str, day: date) -> Path:
    return landing_root / dataset / f"dt={day.isoformat()}"


def day_readiness(landing_root: Path, dataset: str, day: date) -> DayReadiness:
    """Decide whether `dataset` has fully landed for `day`."""
    folder = day_folder(landing_root, dataset, day)
    problem = folder_problem(folder)
    if problem:
        return DayReadiness(day, False, problem)
    manifest_path = folder / MANIFEST_NAME
    try:
        manifest_bytes = read_landed_file(manifest_path)
    except FileNotFoundError:
        return DayReadiness(day, False, "no _SUCCESS manifest")
    except LandedFileProblem as refused:
        return DayReadiness(day, False, str(refused))
    manifest, problem = parse_manifest(manifest_bytes, day)
    if manifest is None:
        return DayReadiness(day, False, problem)
    manifest_files, manifest_records, exported_at = manifest

    parts = sorted(folder.glob(PART_GLOB))
    for part in parts:
        if not PART_NAME.fullmatch(part.name):
            return DayReadiness(
                day, False, f"part file name {_shown(part.name)} is not {PART_NAME_RULE}"
            )
        problem = lstat_problem(part)
        if problem:
            return DayReadiness(day, False, problem)
    relative_parts = [p.relative_to(landing_root).as_posix() for p in parts]
    partial = DayReadiness(
        day, False, "", relative_parts, manifest_files, manifest_records, exported_at
    )
    if len(parts) != manifest_files:
        return _with_reason(partial, f"_SUCCESS lists {manifest_files} files, found {len(parts)}")

    summaries = []
    for part in parts:
        try:
            summaries.append(part_summary(part))
        except LandedFileProblem as refused:
            return _with_reason(partial, str(refused))
        except OSError as error:  # gone or unreadable since it was listed
            return _with_reason(partial, unreadable(part, error))
    lines = sum(summary.lines for summary in summaries)
    if lines != manifest_records:
        return _with_reason(
            partial, f"_SUCCESS lists {manifest_records} records, files hold {lines}"
        )

    return DayReadiness(
        day,
        True,
        "ready",
        relative_parts,
        manifest_files,
        manifest_records,
        exported_at,
        source_fingerprint(manifest_bytes, [summary.sha256 for summary in summaries]),
    )


def parse_manifest(manifest_bytes: bytes, day: date) -> tuple[tuple | None, str]:
    """The manifest's (files, records, exported_at) when every field is valid, else the reason.

    The one definition of a valid manifest: a UTF-8 JSON object with
    - dt: the folder's day, as YYYY-MM-DD;
    - files, records: JSON integers from 0 to 2**63-1 (not booleans, strings or fractions);
    - exported_at: EXPORTED_AT_RULE, returned in its canonical form
      (YYYY-MM-DDTHH:MM:SS[.ffffff]Z), the one form staging parses.
    Other fields are ignored: they never reach SQL.
    """
    try:
        manifest = json.loads(manifest_bytes.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        manifest = None
    if not isinstance(manifest, dict):
        return None, "_SUCCESS is not a JSON object with dt, files, records and exported_at"
    for name in MANIFEST_FIELDS:
        if name not in manifest:
            return None, f"_SUCCESS has no {name}"

    manifest_day = manifest["dt"]
    if manifest_day != day.isoformat():
        shown = manifest_day if _is_iso_day(manifest_day) else _shown(manifest_day)
        return None, f"_SUCCESS names dt {shown}"
    counts = []
    for name in ("files", "records"):
        value = manifest[name]
        if type(value) is not int or not 0 <= value <= _MAX_COUNT:
            return None, f"_SUCCESS {name} {_shown(value)} is not a whole number >= 0"
        counts.append(value)
    exported_at = canonical_exported_at(manifest["exported_at"])
    if exported_at is None:
        shown = _shown(manifest["exported_at"])
        return None, f"_SUCCESS exported_at {shown} is not {EXPORTED_AT_RULE}"
    return (counts[0], counts[1], exported_at), ""


def canonical_exported_at(value: object) -> str | None:
    """`value` as YYYY-MM-DDTHH:MM:SS[.ffffff]Z when it is a valid UTC time, else None."""
    match = _EXPORTED_AT.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    seconds, fraction, _zone = match.groups()
    try:
        moment = datetime.fromisoformat(seconds)
    except ValueError:  # the shape is right, the calendar is not (2026-02-30, 25:00)
        return None
    if fraction:
        moment = moment.replace(microsecond=int(fraction[1:].ljust(6, "0")))
    return moment.isoformat(timespec="microseconds" if fraction else "seconds") + "Z"


def landing_root_problem(landing_root: Path) -> str | None:
    """Why the landing root cannot be read as one literal folder by the engine, if it cannot."""
    if _LANDING_ROOT_FORBIDDEN.search(landing_root.as_posix()):
        return "holds a glob character, a backslash or a control character"
    return None


def _is_iso_day(value: object) -> bool:
    return isinstance(value, str) and bool(_ISO_DAY.fullmatch(value))


def _shown(value: object, limit: int = 60) -> str:
    """A value from the landing, quoted on one ASCII line and cut short: safe in a message."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass(frozen=True)
class PartSummary:
    """What the rule needs of one part file: its lines and the hash of its bytes; and, for
    the line reader, whether the file is plain text (is_plain_text)."""

    lines: int
    sha256: bytes
    # Valid UTF-8 with no byte order mark, unit separator (0x1f) or NUL, no line over
    # PLAIN_LINE_MAX_BYTES, and every line ended alike: "\n" (no carriage return at all) or
    # "\r\n" (every newline after a carriage return, no other carriage return; the last line
    # may have no newline). A streaming line reader gives exactly the row rule's lines for
    # such a file (refill_read_landed_lines), in memory that does not grow with the file.
    # None: any other file, read by the exact rule (refill_split_landed_lines).
    line_ending: str | None = None

    @property
    def is_plain_text(self) -> bool:
        """Text the engine's line reader streams, with LF endings (no carriage return)."""
        return self.line_ending == "\n"


def part_summary(path: Path) -> PartSummary:
    """The part file's summary, read once per identity (path, inode, size, mtime, ctime).
    Raises LandedFileProblem when the file is not a regular file with one link, or is not
    the file judged when it is opened. Recorded as this process's verdict on the file: the
    line reader reads exactly that file (hold_part)."""
    judged = judged_identity(path)
    _inode, _size, mtime_ns, ctime_ns = judged
    if time.time_ns() - max(mtime_ns, ctime_ns) < SETTLED_NS:
        summary = _summarize(path, judged)
    else:
        summary = _settled_part_summary(os.fspath(path), judged)
    record_judged(path, judged, summary)
    return summary


@functools.lru_cache(maxsize=100_000)
def _settled_part_summary(path: str, judged: tuple) -> PartSummary:
    return _summarize(Path(path), judged)


def _summarize(path: Path, judged: tuple) -> PartSummary:
    """count_lines, sha256 and is_plain_text of the file's bytes, read in fixed-size blocks:
    a part file of any size costs the same memory (a day cannot be split, so its files can
    be large)."""
    digest = hashlib.sha256()
    newlines = 0
    carriage_returns = 0
    crlf_pairs = 0
    last_byte = b""
    utf8 = codecs.getincrementaldecoder("utf-8")()
    is_plain = True
    open_line = 0  # bytes of the line still open at the end of the blocks read so far
    with open_landed_file(path, judged) as stream:
        while block := stream.read(SUMMARY_BLOCK_BYTES):
            digest.update(block)
            newlines += block.count(b"\n")
            if is_plain:
                is_plain, open_line = _still_plain(block, not last_byte, open_line, utf8)
                carriage_returns += block.count(b"\r")
                # a pair split across two blocks counts once
                crlf_pairs += block.count(b"\r\n") + (last_byte == b"\r" and block[:1] == b"\n")
            last_byte = block[-1:]
    if is_plain:
        is_plain = _decodes(utf8, b"", final=True)  # no character cut short at the end
    ending = None
    if is_plain and carriage_returns == 0:
        ending = "\n"
    elif is_plain and carriage_returns == crlf_pairs == newlines:
        ending = "\r\n"
    return PartSummary(_line_count(newlines, last_byte), digest.digest(), ending)


def _still_plain(block: bytes, is_first: bool, open_line: int, utf8) -> tuple[bool, int]:
    """Whether the file is still plain text after `block`, and the bytes of its open line.
    A line inside one block is shorter than a block (<= PLAIN_LINE_MAX_BYTES): only the
    line that crosses into this block needs counting."""
    if is_first and block.startswith(codecs.BOM_UTF8):
        return False, 0
    if any(byte in block for byte in _NOT_TEXT_BYTES) or not _decodes(utf8, block):
        return False, 0
    first_newline = block.find(b"\n")
    if first_newline < 0:
        open_line += len(block)
        return open_line < PLAIN_LINE_MAX_BYTES, open_line
    if open_line + first_newline + 1 > PLAIN_LINE_MAX_BYTES:
        return False, 0
    return True, len(block) - block.rfind(b"\n") - 1


def _decodes(utf8, block: bytes, final: bool = False) -> bool:
    if block.isascii() and not utf8.getstate()[0]:  # the common case, 5x cheaper to tell
        return True
    try:
        utf8.decode(block, final)
    except UnicodeDecodeError:
        return False
    return True


def hold_part(landing_root: Path, relative_part: str) -> tuple[str, str | None]:
    """Where the engine reads a part file (relative to the landing root) from, and how it
    ends its lines if the engine's line reader can stream it ("\n" or "\r\n", else None:
    PartSummary.line_ending). The path is a descriptor's (landed_files.hold_for_reading) on
    the very file this process's readiness verdict read, so the bytes the engine parses are
    the bytes the verdict hashed. A path that is not a part file's, a part file under a
    folder that is not the landing's own, one without a verdict in this process, or one no
    longer the regular file it judged raises LandedFileProblem (one line naming it), and
    the engine opens nothing."""
    dataset, folder, name = ([*PurePosixPath(relative_part).parts, "", "", ""])[:3]
    if (
        PurePosixPath(relative_part).parts != (dataset, folder, name)
        or dataset in ("/", ".", "..")
        or not _DT_FOLDER.fullmatch(folder)
        or not PART_NAME.fullmatch(name)
    ):  # <dataset>/dt=<day>/<part name>, relative: the only shape the reader is handed
        raise LandedFileProblem(f"{_shown(relative_part)} is not a part file of the landing")
    path = landing_root / dataset / folder / name
    problem = folder_problem(path.parent)
    if problem:
        raise LandedFileProblem(f"part file {name}: {problem}")
    engine_path, summary = hold_for_reading(path)
    return engine_path, summary.line_ending


def source_fingerprint(manifest_bytes: bytes, part_digests: list[bytes]) -> str:
    """What a re-export changes: the manifest and the bytes it describes (by their sha256)."""
    digest = hashlib.sha256(manifest_bytes)
    for part_digest in part_digests:
        digest.update(part_digest)
    return digest.hexdigest()[:16]


def window_readiness(
    landing_root: Path, dataset: str, start: date, end: date
) -> list[DayReadiness]:
    """The verdict for every day of an inclusive window."""
    return [
        day_readiness(landing_root, dataset, start + timedelta(days=offset))
        for offset in range((end - start).days + 1)
    ]


def landed_days(landing_root: Path, dataset: str) -> list[date]:
    """Every day with a `dt=` folder, ready or not: a full refresh must see the unready ones."""
    root = landing_root / dataset
    if not root.is_dir():
        return []
    days = []
    for child in root.iterdir():
        match = _DT_FOLDER.fullmatch(child.name)
        if match and child.is_dir():
            with contextlib.suppress(ValueError):  # dt=2026-02-30 names no day: not a partition
                days.append(date.fromisoformat(match.group(1)))
    return sorted(days)


def _with_reason(verdict: DayReadiness, reason: str) -> DayReadiness:
    return DayReadiness(**{**asdict(verdict), "reason": reason})


def datasets_day_readiness(landing_root: Path, datasets: Sequence[str], day: date) -> DayReadiness:
    """A day is ready when every dataset has landed it (a chunk builds them all). One
    dataset's verdict is that dataset's verdict unchanged; several are combined: the first
    unready one's reason (named), every part file, the records summed, one fingerprint."""
    return combined_readiness(datasets, [day_readiness(landing_root, d, day) for d in datasets])


def combined_readiness(datasets: Sequence[str], verdicts: list[DayReadiness]) -> DayReadiness:
    """One day's verdicts, one per dataset, as one (see datasets_day_readiness)."""
    day = verdicts[0].day
    if len(verdicts) == 1:
        return verdicts[0]
    for dataset, verdict in zip(datasets, verdicts, strict=True):
        if not verdict.is_ready:
            return _with_reason(verdict, f"{dataset}: {verdict.reason}")
    digest = hashlib.sha256()
    for verdict in verdicts:
        digest.update((verdict.source_fingerprint or "").encode())
    return DayReadiness(
        day,
        True,
        "ready",
        [part for verdict in verdicts for part in verdict.part_files],
        sum(verdict.manifest_files or 0 for verdict in verdicts),
        sum(verdict.manifest_records or 0 for verdict in verdicts),
        max(verdict.exported_at or "" for verdict in verdicts) or None,
        digest.hexdigest()[:16],
    )


def datasets_window_readiness(
    landing_root: Path, datasets: Sequence[str], start: date, end: date
) -> list[tuple[DayReadiness, list[DayReadiness]]]:
    """For every day of an inclusive window: the combined verdict (datasets_day_readiness)
    and each dataset's own, in `datasets` order (its fingerprint is what its models'
    ledger rows were built from)."""
    days = [start + timedelta(days=offset) for offset in range((end - start).days + 1)]
    per_day = [[day_readiness(landing_root, d, day) for d in datasets] for day in days]
    return [(combined_readiness(datasets, verdicts), verdicts) for verdicts in per_day]
