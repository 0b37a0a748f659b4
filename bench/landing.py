"""The benchmark's landing data: flows.sample_data's deterministic days, written once per size.

A year at 10,000 payments a day is about 560 MB of JSON lines and takes about a
minute to write on one core, so the bench writes it with every core and keeps it
between runs: a stamp file names the size and seed it was written for, and a
landing whose stamp matches is reused as it is.
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path

from flows.readiness import day_folder
from flows.sample_data import DATASET, DaySpec, write_days

STAMP_NAME = "_BENCH_LANDING.json"


@dataclass(frozen=True)
class LandingSize:
    """What was landed: `days` consecutive days from `start`, `payments` a day."""

    start: date
    days: int
    payments: int
    seed: int = 7

    @property
    def end(self) -> date:
        return self.start + timedelta(days=self.days - 1)

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
                DaySpec(payments=size.payments),
                size.seed,
            )
            for offset, count in slices
        ]
        for future in futures:
            future.result()
    stamp_path.write_text(json.dumps(size.stamp()))  # last: a half-written landing has none
    return True


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
