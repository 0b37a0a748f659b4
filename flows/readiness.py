"""The readiness rule: when a landed day may be computed. Its one home.

dbt calls it through a DuckDB function that `flows.dbt_plugin` registers (the
staging model refuses a window with an unready day); the Prefect flows call it
directly before they build or while they wait for a late file.

A day is ready only when its `_SUCCESS` manifest exists, parses, names the day,
and agrees with the part files it describes: the number of files and the number
of lines (every line, malformed or not, is a record).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from pathlib import Path

MANIFEST_NAME = "_SUCCESS"
PART_GLOB = "part-*.jsonl"
_DT_FOLDER = re.compile(r"^dt=(\d{4}-\d{2}-\d{2})$")


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

    contents = [p.read_bytes() for p in parts]
    lines = sum(count_lines(c) for c in contents)
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
        source_fingerprint(manifest_bytes, contents),
    )


def source_fingerprint(manifest_bytes: bytes, part_contents: list[bytes]) -> str:
    """What a re-export changes: the manifest and the bytes it describes."""
    digest = hashlib.sha256(manifest_bytes)
    for content in part_contents:
        digest.update(hashlib.sha256(content).digest())
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
