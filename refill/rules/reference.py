"""Reference data a dataset's days read (a seed its rows join to by day): an input of each
day, like the landing, not code. Its one home: the declaration's meaning and the day's
reference fingerprint, computed from the seed files' bytes read as CSV.

A dataset declares what its days read of each seed on its facts model,
`meta: {refill: {reference: [...]}}`, one entry per way a model reads a seed:
- `{seed: S, day: C}`: the rows of S whose date column C is the partition day;
- `{seed: S, month: C}`: the rows of S whose C falls in the partition day's month (a
  monthly average, say);
- `{seed: S, distinct: [C, ...]}`: the set of values of those columns over all of S (in the
  example, the known currencies): an input of every day.

A day's reference fingerprint names, per seed, a digest of exactly those rows:
`<seed>:<16 hex>,<seed>:<16 hex>` (the example's `fx_rates_daily:...,markets:...`).
It is what the day's ledger rows record (the build reads it through the dbt plugin, from
the file whose bytes the warehouse loaded, checked against ops.seed_loads) and what refill
compares with now: a corrected rate makes stale exactly the days whose declared rows
changed, naming the seed. A row whose date column is not an ISO date cannot be placed on
a day: it counts as read by every day.

What the declaration does not cover stays code: a seed a model reads that its datasets do
not declare keeps its content in the model's code version (macros/ops/refill_code_version.sql).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from refill.errors import RefillError

READ_KINDS = ("day", "month", "distinct")
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_FINGERPRINT_PART = re.compile(r"([^:,]+):([^,]*)")
_CACHED_SEEDS = 8  # parsed seed contents kept per process (a plan, a build, the board)


@dataclass(frozen=True)
class ReferenceRead:
    """One way a dataset's days read a seed (see the module's docstring)."""

    seed: str  # the seed's name
    seed_id: str  # its dbt unique id (ops.seed_loads.seed_id)
    file: str  # its CSV file, absolute: the engine opens it, wherever dbt runs
    kind: str  # one of READ_KINDS
    columns: tuple[str, ...]  # day, month: the date column; distinct: the columns
    # the sha256 dbt took of the file's text when it parsed the project (its seed
    # checksum: the text stripped), when dbt's graph gave `file` made absolute from $PWD
    parsed_sha256: str | None = field(default=None, compare=False)

    def describe(self) -> str:
        return f"{self.seed}.{self.kind}({','.join(self.columns)})"


def parse_reads(entries: object, seeds: Mapping[str, Mapping[str, str]], model: str):
    """The declared reads (`meta.refill.reference` of `model`), checked: a list of
    {seed, day|month|distinct}; `seeds` maps each seed of the project to its `id` and
    `file` (and `parsed_sha256`, refill_dataset_reference's). Raises RefillError naming
    the model and the entry."""
    if entries in (None, []):
        return ()
    if not isinstance(entries, list):
        raise RefillError(f"model {model}: meta.refill.reference is not a list of seed reads")
    reads = []
    for number, entry in enumerate(entries):
        where = f"model {model}: meta.refill.reference[{number}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("seed"), str):
            raise RefillError(f"{where} is not {{seed: <name>, day|month|distinct: ...}}")
        kinds = [kind for kind in READ_KINDS if kind in entry]
        unknown = set(entry) - {"seed", *READ_KINDS}
        if len(kinds) != 1 or unknown:
            raise RefillError(f"{where} needs exactly one of day, month or distinct, and no more")
        seed, kind = entry["seed"], kinds[0]
        if seed not in seeds:
            raise RefillError(f"{where}: {seed!r} is not a seed of the project")
        columns = entry[kind] if kind == "distinct" else [entry[kind]]
        if not columns or not all(isinstance(c, str) and c for c in columns):
            raise RefillError(f"{where}: {kind} names no column")
        found = seeds[seed]
        reads.append(
            ReferenceRead(
                seed, found["id"], found["file"], kind, tuple(columns), found.get("parsed_sha256")
            )
        )
    return tuple(reads)


def window_fingerprints(
    reads: Sequence[ReferenceRead],
    start: date,
    end: date,
    loaded: Mapping[str, str | None] | None = None,
) -> tuple[dict[date, str], dict[str, str]]:
    """Each day's reference fingerprint over the inclusive window, and the sha256 of every
    seed file read (seed id -> hex): each file is read once, and both come from the same
    bytes. `loaded` (seed id -> the sha256 the warehouse's load recorded) makes a file
    that is not the one loaded a RefillError: a build would record rates its rows do not
    hold. A file named by a relative path, or whose text is not the one dbt parsed (a read
    with `parsed_sha256`), is a RefillError too: the engine would read another file than
    the project's. A dataset that declares nothing has the fingerprint "" on every day."""
    by_seed: dict[str, list[ReferenceRead]] = defaultdict(list)
    for read in reads:
        by_seed[read.seed].append(read)
    contents: dict[str, str] = {}
    tables: dict[str, _SeedDigests] = {}
    for seed, seed_reads in sorted(by_seed.items()):
        data = _seed_bytes(seed_reads[0])
        sha = hashlib.sha256(data).hexdigest()
        seed_id = seed_reads[0].seed_id
        if loaded is not None and loaded.get(seed_id) != sha:
            was = (loaded.get(seed_id) or "nothing")[:12]
            raise RefillError(
                f"seed {seed} changed since it was loaded into the warehouse (loaded {was}, "
                f"file {sha[:12]}): load it (`dbt seed`, or a build that selects it; refill's "
                f"commands load it) and build {start}..{end} again; nothing written"
            )
        contents[seed_id] = sha
        tables[seed] = _digests(sha, data, tuple(seed_reads))
    days = [start + timedelta(days=n) for n in range((end - start).days + 1)]
    fingerprints = {
        day: ",".join(f"{seed}:{tables[seed].of(day)}" for seed in sorted(tables)) for day in days
    }
    return fingerprints, contents


def _seed_bytes(read: ReferenceRead) -> bytes:
    """The seed file's bytes, from its absolute path, checked against dbt's parse."""
    path = Path(read.file)
    if not path.is_absolute():
        # opened where the engine runs (Spark's script transformation: a folder of its own)
        raise RefillError(
            f"seed {read.seed}: its file {read.file!r} is a relative path, which names the "
            "file only in dbt's working directory; give it absolute (refill_project_path)"
        )
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        from_dbt = read.parsed_sha256 is not None  # a path made absolute from $PWD
        raise RefillError(
            f"seed {read.seed}: no file at {read.file}"
            + (
                " (a relative project dir is resolved from dbt's working directory as $PWD"
                " names it); give dbt an absolute --project-dir; nothing written"
                if from_dbt
                else ""
            )
        ) from None
    if read.parsed_sha256 is not None:
        text = data.decode("utf-8", errors="replace").strip()
        found = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if found != read.parsed_sha256:
            raise RefillError(
                f"seed {read.seed}: {read.file} is not the file dbt parsed (its text "
                f"{found[:12]}, dbt's {read.parsed_sha256[:12]}): it changed since, or $PWD is "
                "not dbt's working directory (a relative project dir is resolved from it); "
                "build again, giving dbt an absolute --project-dir; nothing written"
            )
    return data


def datasets_fingerprints(
    reads_per_dataset: Sequence[Sequence[ReferenceRead]], start: date, end: date
) -> dict[date, list[str]]:
    """Each day's reference fingerprint over the inclusive window, one per dataset in the
    order given (each dataset's declared reads), from the seed files now."""
    per_dataset = [window_fingerprints(reads, start, end)[0] for reads in reads_per_dataset]
    days = [start + timedelta(days=n) for n in range((end - start).days + 1)]
    return {day: [found[day] for found in per_dataset] for day in days}


def changed_seeds(published: str | None, current: str | None) -> tuple[str, ...]:
    """The seeds whose part of the day's reference fingerprint differs between a ledger row
    (`published`; None from a row recorded before refill recorded it) and now."""
    then, now = _parts(published), _parts(current)
    return tuple(
        sorted(seed for seed in then.keys() | now.keys() if then.get(seed) != now.get(seed))
    )


def _parts(fingerprint: str | None) -> dict[str, str]:
    return dict(_FINGERPRINT_PART.findall(fingerprint or ""))


class _SeedDigests:
    """A seed's rows, digested per read: by day, by month, or whole (distinct)."""

    def __init__(self, header: tuple[str, ...], reads: tuple[ReferenceRead, ...], rows):
        self.reads = reads
        self.header = header
        # per read: key (a day, a (year, month), or None for every day) -> row encodings
        self.slices: list[dict] = []
        for read in reads:
            indexes = [_column(header, read, column) for column in read.columns]
            slices: dict = defaultdict(list)
            for row in rows:
                if read.kind == "distinct":
                    slices[None].append(json.dumps([_cell(row, i) for i in indexes]))
                    continue
                day = _iso_day(_cell(row, indexes[0]))
                key = None if day is None else day if read.kind == "day" else day.replace(day=1)
                slices[key].append(json.dumps(list(row)))
            if read.kind == "distinct":
                slices[None] = sorted(set(slices[None]))
            self.slices.append({key: _digest(sorted(found)) for key, found in slices.items()})
        self._empty = _digest([])

    def of(self, day: date) -> str:
        """The digest of every row the reads take for `day` (16 hex digits)."""
        digest = hashlib.sha256(json.dumps(self.header).encode())
        for read, slices in zip(self.reads, self.slices, strict=True):
            key = day if read.kind == "day" else day.replace(day=1)
            digest.update(read.describe().encode())
            digest.update(slices.get(None, self._empty))  # rows of every day
            if read.kind != "distinct":
                digest.update(slices.get(key, self._empty))
        return digest.hexdigest()[:16]


_parsed: dict[tuple[str, tuple[ReferenceRead, ...]], _SeedDigests] = {}


def _digests(sha: str, data: bytes, reads: tuple[ReferenceRead, ...]) -> _SeedDigests:
    """The seed's digests, parsed once per content and declaration."""
    key = (sha, reads)
    if key not in _parsed:
        header, rows = _read_csv(reads[0].seed, data)
        if len(_parsed) >= _CACHED_SEEDS:
            _parsed.pop(next(iter(_parsed)))
        _parsed[key] = _SeedDigests(header, reads, rows)
    return _parsed[key]


def _read_csv(seed: str, data: bytes) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RefillError(f"seed {seed}: its file is not UTF-8 text") from None
    records = [tuple(record) for record in csv.reader(io.StringIO(text, newline=""))]
    if not records:
        raise RefillError(f"seed {seed}: its file has no header")
    return records[0], [record for record in records[1:] if record]


def _column(header: tuple[str, ...], read: ReferenceRead, column: str) -> int:
    if column not in header:
        raise RefillError(
            f"seed {read.seed} has no column {column!r} (its reference declaration reads it)"
        )
    return header.index(column)


def _cell(row: tuple[str, ...], index: int) -> str:
    return row[index] if index < len(row) else ""


def _iso_day(value: str) -> date | None:
    if not _ISO_DAY.fullmatch(value):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def _digest(encoded_rows: list[str]) -> bytes:
    return hashlib.sha256("\n".join(encoded_rows).encode()).digest()
