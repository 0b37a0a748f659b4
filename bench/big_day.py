"""A big day: does memory grow with the size of one day?

    python -m bench.big_day 2000000              # one day of about 2,000,000 lines
    python -m bench.big_day 10000000 --keep      # keep the landing for another run

A chunk is cut by days, and a day cannot be split, so the largest day bounds the memory a
backfill needs. This lands one day of about LINES lines in two part files (the standard
generator: replays, conflicts and 1% malformed lines), then measures from the shell:
  (a) `refill backfill` of that day, cold (the command starts its temporary Prefect server)
  (e) the plain microbatch (bench/plain_microbatch_project) of the same day
  (c) the floor (bench/floor.py: one DuckDB script, refill's row rules)
and prints wall, CPU and peak memory of each process tree, and what each published. The
landing (about 155 bytes a line) is removed at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from datetime import date
from pathlib import Path

from bench import command, contenders
from bench.contenders import REPO_DIR, Workbench
from bench.landing import LandingSize, ensure_landing, landed_bytes
from refill.rules.readiness import MANIFEST_NAME, day_folder
from refill.sample_data import DATASET

BIG_DAY = date(2025, 3, 1)  # inside the fx seed
LINES_PER_PAYMENT = 1.035  # the generator's replays (2%), conflicts (0.5%), malformed (1%)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lines", type=int, help="about how many lines the day holds")
    parser.add_argument("--out", type=Path, default=REPO_DIR / "bench" / "out" / "big-day")
    parser.add_argument("--keep", action="store_true", help="keep the landing afterwards")
    parser.add_argument("--only", default="a,e", help="contenders to run, in order: any of a, e, c")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each contender")
    args = parser.parse_args(argv)

    args.out = args.out.resolve()  # the contenders run from their own project folders
    bench = Workbench(out=args.out, product_dir=REPO_DIR)
    landing = args.out / "landing"
    size = LandingSize(BIG_DAY, 1, max(round(args.lines / LINES_PER_PAYMENT), 1))
    started = time.monotonic()
    # one day: one worker (the day is one write_day call whichever the worker count)
    written = ensure_landing(landing, size, workers=1)
    manifest = json.loads((day_folder(landing, DATASET, BIG_DAY) / MANIFEST_NAME).read_text())
    print(
        f"landing: {manifest['records']:,} lines in {manifest['files']} part files, "
        f"{landed_bytes(landing) / 1e6:.0f} MB"
        + (f" (written in {time.monotonic() - started:.0f}s)" if written else " (reused)"),
        flush=True,
    )
    results = {"lines": manifest["records"], "bytes": landed_bytes(landing), "runs": []}
    try:
        # interleaved (a, e, c, a, e, c, ...): a change in the machine's load hits each alike
        for repetition in range(1, args.repeat + 1):
            name = f"big-day-{repetition}"
            for contender in args.only.split(","):
                if contender == "a":
                    run = command.cold_backfill(bench, landing, BIG_DAY, BIG_DAY, name)
                elif contender == "e":
                    run, _ = contenders.plain_microbatch(bench, landing, BIG_DAY, BIG_DAY, name)
                elif contender == "c":
                    run = contenders.floor(bench, landing, BIG_DAY, BIG_DAY, name)
                else:
                    parser.error(f"unknown contender {contender!r}: a, e or c")
                results["runs"].append(run.to_json())
                _show(run)
    finally:
        if not args.keep:
            shutil.rmtree(landing, ignore_errors=True)
    result_path = args.out / f"big-day-{manifest['records']}.json"
    result_path.write_text(json.dumps(results, indent=2))
    print(f"results: {result_path}")
    return 0


def _show(run: contenders.Run) -> None:
    measured = run.measurement
    print(
        f"{run.label}: wall {measured.wall_seconds:.1f}s, cpu {measured.cpu_seconds:.1f}s, "
        f"peak {measured.peak_rss_bytes / 2**30:.2f} GiB, other cores "
        f"{measured.other_cores:.2f}; published {run.published}",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
