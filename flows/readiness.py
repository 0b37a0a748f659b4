"""The readiness rule: when a landed day may be computed. Its one home.

dbt calls it through a DuckDB function that `flows.dbt_plugin` registers (the
staging model refuses a window with an unready day); the Prefect flows call it
directly before they build or while they wait for a late file.

A day is ready only when its `_SUCCESS` manifest exists, parses, names the day,
and agrees with the part files it describes: the number of files and the number
of lines (every line, malformed or not, is a record).

One process asks about the same day several times (the plan, dbt's gate in each
chunk, the board at the end); the per-file work, a line count and a hash, is
memoized by the file's identity, so an unchanged file is read once per process
and a rewritten one is always read again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import time
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from pathlib import Path

MANIFEST_NAME = "_SUCCESS"
PART_GLOB = "part-*.jsonl"
_DT_FOLDER = re.compile(r"^dt=(\d{4}-\d{2}-\d{2})$")
# A file changed this recently may still be changing within the file system's clock
# granularity (a rewrite of the same size in the same tick keeps its mtime): it is read
# again on every call until it is older than this, as git treats "racily clean" files.
SETTLED_NS = 2_000_000_000


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
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def day_folder(landing_root: Path, dataset: str, day: date) -> Path:
    return landing_root / dataset / f"dt={day.isoformat()}"


def day_readiness(landing_root: Path, dataset: str, day: date) -> DayReadiness:
    """Decide whether `dataset` has fully landed for `day`."""
    folder = day_folder(landing_root, dataset, day)
    if not folder.is_dir():
        return DayReadiness(day, False, "no landing folder")
    manifest_path = folder / MANIFEST_NAME
    if not manifest_path.is_file():
        return DayReadiness(day, False, "no _SUCCESS manifest")

    manifest_bytes = manifest_path.read_bytes()
    try:
        manifest = json.loads(manifest_bytes)
        manifest_files = int(manifest["files"])
        manifest_records = int(manifest["records"])
        manifest_day = str(manifest["dt"])
    except (ValueError, KeyError, TypeError):
        return DayReadiness(day, False, "_SUCCESS is not a manifest with dt, files and records")

    parts = sorted(folder.glob(PART_GLOB))
    relative_parts = [p.relative_to(landing_root).as_posix() for p in parts]
    partial = DayReadiness(
        day,
        False,
        "",
        relative_parts,
        manifest_files,
        manifest_records,
        manifest.get("exported_at"),
    )
    if manifest_day != day.isoformat():
        return _with_reason(partial, f"_SUCCESS names dt {manifest_day}")
    if len(parts) != manifest_files:
        return _with_reason(partial, f"_SUCCESS lists {manifest_files} files, found {len(parts)}")

    summaries = [part_summary(p) for p in parts]
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
        manifest.get("exported_at"),
        source_fingerprint(manifest_bytes, [summary.sha256 for summary in summaries]),
    )


@dataclass(frozen=True)
class PartSummary:
    """What the rule needs of one part file: its lines and the hash of its bytes."""

    lines: int
    sha256: bytes


def part_summary(path: Path) -> PartSummary:
    """The part file's summary, read once per identity (path, size, mtime, ctime, inode)."""
    stat = path.stat()
    if time.time_ns() - max(stat.st_mtime_ns, stat.st_ctime_ns) < SETTLED_NS:
        return _summarize(path.read_bytes())
    identity = (os.fspath(path), stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
    return _settled_part_summary(identity)


@functools.lru_cache(maxsize=100_000)
def _settled_part_summary(identity: tuple) -> PartSummary:
    return _summarize(Path(identity[0]).read_bytes())


def _summarize(content: bytes) -> PartSummary:
    return PartSummary(count_lines(content), hashlib.sha256(content).digest())


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
        match = _DT_FOLDER.match(child.name)
        if match and child.is_dir():
            days.append(date.fromisoformat(match.group(1)))
    return sorted(days)


def describe_unready(verdicts: list[DayReadiness]) -> str:
    """One line naming every unready day and why, for an error message."""
    return "; ".join(f"{v.day.isoformat()} ({v.reason})" for v in verdicts if not v.is_ready)


def _with_reason(verdict: DayReadiness, reason: str) -> DayReadiness:
    return DayReadiness(**{**asdict(verdict), "reason": reason})
