"""Measure a restatement preview on 90 days of sample data (docs: guarantees, Restatement preview):
the time of a direct `--restate --yes` run vs `--from-preview ID` publishing what a preview
kept, and that both leave the same warehouse. Usage:
    python tools/measure_preview.py [--days 90] [--payments 1000] [--chunk-days 92]
Runs the flows in-process on a temporary Prefect server, in a temporary folder."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--payments", type=int, default=1000)
    parser.add_argument("--chunk-days", type=int, default=92)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="refill-preview-measure-"))
    landing, warehouse = folder / "landing", folder / "a" / "refill.duckdb"
    direct = folder / "b" / "refill.duckdb"
    os.environ.update(REFILL_LANDING=str(landing), REFILL_WAREHOUSE=str(warehouse))
    os.environ["REFILL_PREVIEWS"] = str(folder / "previews")
    from prefect.testing.utilities import prefect_test_harness

    from flows.backfill import backfill
    from flows.tasks import run_flow
    from refill.sample_data import DaySpec, write_day, write_days
    from tests.helpers import snapshot

    start = date(2025, 1, 1)
    end = start + timedelta(days=args.days - 1)
    write_days(landing, start, args.days, DaySpec(payments=args.payments))
    common = {"start": start, "end": end, "chunk_days": args.chunk_days, "retries": 1}
    with prefect_test_harness(server_startup_timeout=120):
        run_flow(backfill, **common)
        # a re-export of one day: the restatement changes it
        write_day(landing, start + timedelta(days=10), DaySpec(payments=args.payments + 50), 11)
        direct.parent.mkdir(parents=True)
        shutil.copy(warehouse, direct)

        clock = time.monotonic()
        outcome = run_flow(backfill, **common, restate=True, preview=True).preview
        preview_seconds = time.monotonic() - clock
        clock = time.monotonic()
        run_flow(backfill, **common, restate=True, confirm=outcome.preview_id)
        publish_seconds = time.monotonic() - clock

        os.environ["REFILL_WAREHOUSE"] = str(direct)
        clock = time.monotonic()
        run_flow(backfill, **common, restate=True, confirm=True)
        direct_seconds = time.monotonic() - clock
    same = snapshot(direct) == snapshot(warehouse)
    print(
        f"{args.days} days x {args.payments} payments, chunks of {args.chunk_days} day(s): "
        f"direct --restate --yes {direct_seconds:.1f}s; --preview {preview_seconds:.1f}s; "
        f"--from-preview {publish_seconds:.1f}s ({publish_seconds / direct_seconds:.0%} of "
        f"direct); same warehouse: {same}"
    )
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
