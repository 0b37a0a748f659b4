"""The benchmark's landing data: refill.sample_data's deterministic days, written once per size.

A year at 10,000 payments a day is about 560 MB of JSON lines and takes about a
minute to write on one core, so the bench writes it with every core and keeps it
between runs: a stamp file names the size, variant and seed it was written for, and
a landing whose stamp matches is reused as it is.

Two variants of the same generator:
  standard   the generator's defaults: replays, conflicts and 1% malformed lines,
             spread over every part file
  realistic  the same without malformed lines, then 0.01% of the landing's lines
             made malformed (the generator's own kinds) in a handful of part files
             across the range: what an export that is mostly clean looks like
"""

from __future__ import annotations

import json
import random
import shutil
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path

from refill.rules.readiness import MANIFEST_NAME, day_folder

# _malformed is the generator's one home for what a malformed line looks like; the bench
# plants its lines rather than copy the rule (a public name is asked of its owner).
from refill.sample_data import DATASET, MALFORMED_KINDS, DaySpec, _malformed, write_days

STAMP_NAME = "_BENCH_LANDING.json"
VARIANTS = ("standard", "realistic")
REALISTIC_MALFORMED_FRACTION = 0.0001  # 0.01% of the landed lines
REALISTIC_MALFORMED_FILES = 4  # the part files that hold them all


@dataclass(frozen=True)
class LandingSize:
    """What was landed: `days` consecutive days from `start`, `payments` a day, of a variant."""

    start: date
    days: int
    payments: int
    seed: int = 7
    variant: str = "standard"

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown landing variant {self.variant!r}: one of {VARIANTS}")

    @property
    def end(self) -> date:
        return self.start + timedelta(days=self.days - 1)

    @property
    def day_spec(self) -> DaySpec:
        if self.variant == "realistic":
            return DaySpec(payments=self.payments, malformed_rate=0.0)
        return DaySpec(payments=self.payments)

    def stamp(self) -> dict:
        return {**asdict(self), "start": self.start.isoformat()}


def ensure_landing(root: Path, size: LandingSize, workers: int = 2) -> bool:
    """Write `size` under `root` unless it is already there. Returns True when written."""
    stamp_path = root / STAMP_NAME
    if stamp_path.is_file() and json.loads(stamp_path.read_text()) == size.stamp():
        return False
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    slices = _slices(size.days, max(workers, 1))
    with ProcessPoolExecutor(max_workers=len(slices)) as pool:
        futures = [
            pool.submit(
                write_days,
                root,
                size.start + timedelta(days=offset),
                count,
                size.day_spec,
                size.seed,
            )
            for offset, count in slices
        ]
        for future in futures:
            future.result()
    if size.variant == "realistic":
        plant_malformed_lines(root, size, REALISTIC_MALFORMED_FRACTION, REALISTIC_MALFORMED_FILES)
    stamp_path.write_text(json.dumps(size.stamp()))  # last: a half-written landing has none
    return True


def plant_malformed_lines(root: Path, size: LandingSize, fraction: float, files: int) -> int:
    """Make `fraction` of the landed lines (at least one a file) malformed, all in `files`
    part files drawn across the range; each day's manifest counts its new lines, so the
    landing stays ready. A planted line is the malformed twin of a payment of its file
    (its id ends in -bad, as the generator's own), at a random place in the file.
    Returns how many lines were planted."""
    rng = random.Random(f"{size.seed}:realistic")
    days = [size.start + timedelta(days=offset) for offset in range(size.days)]
    manifests = {day: day_folder(root, DATASET, day) / MANIFEST_NAME for day in days}
    landed = sum(json.loads(path.read_text())["records"] for path in manifests.values())
    parts = [
        (day, part)
        for day in days
        for part in sorted(day_folder(root, DATASET, day).glob("part-*"))
    ]
    chosen = sorted(rng.sample(parts, min(files, len(parts))))
    wanted = max(round(landed * fraction), len(chosen))
    planted = 0
    for index, (day, part) in enumerate(chosen):
        count = wanted // len(chosen) + (1 if index < wanted % len(chosen) else 0)
        lines = part.read_text().splitlines()
        # one twin per transaction: a replayed payment must not give two identical bad lines
        by_transaction = {json.loads(line)["transaction_id"]: line for line in lines}
        twins = rng.sample(sorted(by_transaction), min(count, len(by_transaction)))
        for transaction_id in twins:
            payment = json.loads(by_transaction[transaction_id])
            bad_line = _malformed(payment, rng.choice(MALFORMED_KINDS), day)
            lines.insert(rng.randrange(len(lines) + 1), bad_line)
        part.write_text("".join(f"{line}\n" for line in lines))
        manifest = json.loads(manifests[day].read_text())
        manifest["records"] += len(twins)
        manifests[day].write_text(json.dumps(manifest))
        planted += len(twins)
    return planted


def copy_days(source: Path, target: Path, start: date, days: int) -> None:
    """Land a subset: copy `days` day folders from `start` of one landing into another."""
    if target.exists():
        shutil.rmtree(target)
    for offset in range(days):
        day = start + timedelta(days=offset)
        shutil.copytree(day_folder(source, DATASET, day), day_folder(target, DATASET, day))


def landed_bytes(root: Path) -> int:
    return sum(path.stat().st_size for path in (root / DATASET).rglob("part-*.jsonl"))


def _slices(days: int, workers: int) -> list[tuple[int, int]]:
    """Consecutive (offset, count) runs of days, one per worker."""
    per_worker, extra = divmod(days, workers)
    slices, offset = [], 0
    for index in range(workers):
        count = per_worker + (1 if index < extra else 0)
        if count:
            slices.append((offset, count))
            offset += count
    return slices
