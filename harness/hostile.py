"""Hostile landings: what an attacker or a careless exporter can put in a day's folder.

Each kind writes an ordinary day (refill.sample_data.write_day), then changes it the way
an exporter could, and rewrites the manifest last so that it agrees with the files
(unless the manifest itself is the hostile part). refill must either refuse the day
(not ready, a one-line reason naming it, nothing changed) or publish it exactly as the
oracle (`tests.helpers.expected_day`) says.

| kind           | what the day holds                                                        |
|----------------|---------------------------------------------------------------------------|
| odd_ids        | payments whose transaction_id holds quotes, `; drop table`, Jinja, % _    |
| reused_ids     | refunds of the previous day's transaction ids (one row each)             |
| non_utf8       | lines that are not valid UTF-8 (each must be quarantined, not fail the day)|
| manifest_field | a manifest field with SQL in it, an odd exported_at, or none at all       |
| file_name      | a part file whose name holds a quote, `; drop table`, spaces or Jinja     |
| zone_free_times| event_ts near midnight without a zone (UTC by the landing contract) or    |
|                | with `+00:00`: a host in another time zone must not move them            |
| special_file   | a part file that is a symlink (outside the landing, to the process's     |
|                | environment, inside the day), a hard link to a file outside, a FIFO or a |
|                | folder; the manifest's counts raised to what it reads as                |

(Kept here until refill/sample_data.py has writers of its own for hostile input.)
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from refill.rules.readiness import MANIFEST_NAME, count_lines, day_folder
from refill.sample_data import DATASET, DaySpec, write_day

KINDS = (
    "odd_ids",
    "reused_ids",
    "non_utf8",
    "manifest_field",
    "file_name",
    "zone_free_times",
    "special_file",
)
INJECTION = "'); drop table main.fct_payments; --"

ODD_IDS = (
    "tx-'quoted'",
    'tx-"double"',
    f"tx-{INJECTION}",
    "tx-back\\slash\\",
    "tx-{{ var('start_date') }}",
    "tx-%_like%",
    "tx-ünï-☃",
    "tx- spaced ",
)
# (field, value): None drops the field. Values staging cannot take as they are.
MANIFEST_FIELDS = (
    ("exported_at", "2025-01-01T00:00:00Z" + INJECTION),
    ("exported_at", "{{ exceptions.raise_compiler_error('jinja ran') }}"),
    ("exported_at", "2025-01-01T00:00:00.123456Z"),
    ("exported_at", "2025-01-01 00:00:00+05:30"),
    ("exported_at", "yesterday"),
    ("exported_at", None),
    ("exported_at", 1735689600),
    ("note", INJECTION),
)
FILE_NAMES = (
    f"part-0000{INJECTION}.jsonl",
    "part-0000 o'clock.jsonl",
    'part-0000 "double".jsonl',
    "part-0000 {{ var('x') }}.jsonl",
    "part-0000%_.jsonl",
)


# (hour, minute, zone suffix) of event_ts on the day: no zone, or UTC written as +00:00.
# Part files that are not regular files of the landing (an attacker's landing: readiness
# refuses each, naming the file), each written
# at `path` by its kind's writer; `outside` is a file outside the landing that a link may
# name. Test and harness machinery: never in the product package.
def _special_symlink_outside(path: Path, outside: Path) -> None:
    path.symlink_to(outside)


def _special_symlink_environ(path: Path, outside: Path) -> None:
    path.symlink_to("/proc/self/environ")  # the attack: the environment, token included


def _special_symlink_inside(path: Path, outside: Path) -> None:
    inside = path.with_name(path.name + ".data")
    inside.write_bytes(outside.read_bytes())
    path.symlink_to(inside.name)


def _special_broken_symlink(path: Path, outside: Path) -> None:
    path.symlink_to(outside.with_name("nowhere.jsonl"))


def _special_hard_link(path: Path, outside: Path) -> None:
    os.link(outside, path)


def _special_fifo(path: Path, outside: Path) -> None:
    os.mkfifo(path)


def _special_socket(path: Path, outside: Path) -> None:
    # A socket's path is at most about 100 bytes: bound under a short name, then moved (the
    # name stays after the socket closes).
    short = Path(tempfile.mkdtemp(prefix="s")) / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(short))
    os.replace(short, path)
    short.parent.rmdir()


def _special_folder(path: Path, outside: Path) -> None:
    path.mkdir()
    (path / "part-0000.jsonl").write_bytes(outside.read_bytes())


# kind -> (writer, what readiness calls it)
SPECIAL_PART_FILES = {
    "symlink outside": (_special_symlink_outside, "a symbolic link"),
    "symlink to the environment": (_special_symlink_environ, "a symbolic link"),
    "symlink inside": (_special_symlink_inside, "a symbolic link"),
    "broken symlink": (_special_broken_symlink, "a symbolic link"),
    "hard link outside": (_special_hard_link, "hard-linked (2 links)"),
    "fifo": (_special_fifo, "a FIFO"),
    "socket": (_special_socket, "a socket"),
    "folder": (_special_folder, "a folder"),
}


def write_special_part(path: Path, kind: str, outside: Path) -> None:
    """Put a part file of `kind` (SPECIAL_PART_FILES) at `path`."""
    SPECIAL_PART_FILES[kind][0](path, outside)


ZONE_FREE_TIMES = (
    (0, 30, ""),
    (3, 0, ""),
    (12, 0, ""),
    (21, 0, ""),
    (23, 30, ""),
    (23, 45, "+00:00"),
)
# Part files that are not regular files of the landing (SPECIAL_PART_FILES below;
# no socket: its path must be short). The one outside the landing holds OUTSIDE_ID's line.
SPECIAL_FILES = (
    "symlink outside",
    "symlink to the environment",
    "hard link outside",
    "symlink inside",
    "fifo",
    "folder",
)
OUTSIDE_ID = "tx-outside-the-landing"
NON_UTF8_LINES = (
    b'{"transaction_id": "tx-\xff\xfe", "event_ts": "%sT12:00:00Z", "amount": 1, '
    b'"currency": "USD", "market": "US", "status": "captured"}',
    b"caf\xe9 au lait",
    b"\xc3\x28\xa0\xa1",
)


@dataclass(frozen=True)
class Hostile:
    """One hostile change to a day: its kind and which variant of it (an index)."""

    kind: str
    choice: int = 0

    def describe(self) -> str:
        if self.kind == "manifest_field":
            name, value = MANIFEST_FIELDS[self.choice % len(MANIFEST_FIELDS)]
            return f"manifest {name}={'(none)' if value is None else repr(value)}"
        if self.kind == "file_name":
            return f"part file named {FILE_NAMES[self.choice % len(FILE_NAMES)]!r}"
        if self.kind == "special_file":
            return f"a part file that is a {SPECIAL_FILES[self.choice % len(SPECIAL_FILES)]}"
        return self.kind.replace("_", " ")


def write_hostile_day(root: Path, day: date, spec: DaySpec, hostile: Hostile, seed: int) -> None:
    """Write the day as `spec` says, then make it hostile; the manifest is written last."""
    manifest = write_day(root, day, spec, seed=seed)
    folder = day_folder(root, DATASET, day)
    parts = sorted(folder.glob("part-*.jsonl"))
    first = parts[0] if parts else folder / "part-0000.jsonl"
    if hostile.kind == "odd_ids":
        _append(first, [_payment(tx, day, 12) for tx in ODD_IDS])
    elif hostile.kind == "reused_ids":
        previous = day - timedelta(days=1)
        refunds = [f"tx-{previous:%Y%m%d}-{number:06d}" for number in range(0, 12, 2)]
        _append(first, [_payment(tx, day, 9, status="refunded") for tx in refunds])
    elif hostile.kind == "non_utf8":
        lines = [line.replace(b"%s", day.isoformat().encode()) for line in NON_UTF8_LINES]
        _append_bytes(first, lines)
    elif hostile.kind == "zone_free_times":
        lines = []
        for number, (hour, minute, suffix) in enumerate(ZONE_FREE_TIMES):
            moment = datetime.combine(day, datetime.min.time()) + timedelta(
                hours=hour, minutes=minute
            )
            line = _payment(f"tx-zone-{number}", day, 0)
            stamp = moment.strftime("%Y-%m-%dT%H:%M:%S") + suffix
            lines.append(line.replace(f"{day.isoformat()}T00:00:00Z", stamp))
        _append(first, lines)
    elif hostile.kind == "file_name":
        target = folder / FILE_NAMES[hostile.choice % len(FILE_NAMES)]
        if first.exists():
            first.rename(target)
        else:
            target.write_text(_payment("tx-named", day, 10) + "\n")
    elif hostile.kind == "special_file":
        outside = root.parent / "outside" / "secret.jsonl"
        outside.parent.mkdir(exist_ok=True)
        outside.write_text(_payment(OUTSIDE_ID, day, 11) + "\n")
        kind = SPECIAL_FILES[hostile.choice % len(SPECIAL_FILES)]
        write_special_part(folder / "part-9999.jsonl", kind, outside)
    elif hostile.kind != "manifest_field":
        raise ValueError(f"unknown hostile kind {hostile.kind!r}")
    parts = sorted(folder.glob("part-*.jsonl"))
    manifest["files"] = len(parts)
    # what each part reads as when links are followed: the attack's raised counts
    manifest["records"] = sum(count_lines(part.read_bytes()) for part in parts if part.is_file())
    if hostile.kind == "manifest_field":
        name, value = MANIFEST_FIELDS[hostile.choice % len(MANIFEST_FIELDS)]
        if value is None:
            manifest.pop(name, None)
        else:
            manifest[name] = value
    if spec.write_manifest:
        (folder / MANIFEST_NAME).write_text(json.dumps(manifest))


def _payment(transaction_id: str, day: date, hour: int, status: str = "captured") -> str:
    moment = datetime.combine(day, datetime.min.time()) + timedelta(hours=hour)
    record = {
        "transaction_id": transaction_id,
        "event_ts": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "amount": 12.5,
        "currency": "USD",
        "market": "US",
        "status": status,
    }
    return json.dumps(record, ensure_ascii=False)


def _append(part: Path, lines: list[str]) -> None:
    _append_bytes(part, [line.encode() for line in lines])


def _append_bytes(part: Path, lines: list[bytes]) -> None:
    data = part.read_bytes() if part.exists() else b""
    if data and not data.endswith(b"\n"):
        data += b"\n"
    part.write_bytes(data + b"".join(line + b"\n" for line in lines))
