"""Measure what one corrected fx rate costs to restate (docs/guarantees.md, "Reference data
is an input of each day"): a year of sample data published, one EUR rate of one day
corrected in the seed, then, on two copies of the warehouse, side by side:
- per day (this version): `refill backfill --yes` over the year rebuilds the stale days,
  exactly the days that read the rate (the day, and its month for fct_daily_revenue_v1);
- per seed (the version before, which kept the seed's content in the code version and so
  planned every day stale): `--restate --yes` over the year, the same builds that plan ran.
Both must leave the same warehouse. Usage:
    python tools/measure_seed_change.py [--days 365] [--payments 1000]
Runs the flows in-process on a temporary Prefect server, on a copy of the project."""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--payments", type=int, default=1000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="refill-seed-measure-"))
    landing = folder / "landing"
    per_day, per_seed = folder / "a" / "refill.duckdb", folder / "b" / "refill.duckdb"
    os.environ.update(REFILL_LANDING=str(landing), REFILL_WAREHOUSE=str(per_day))
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    from prefect.testing.utilities import prefect_test_harness

    from flows.backfill import backfill
    from flows.tasks import run_flow
    from refill import settings
    from refill.rules.planning import DayState
    from refill.sample_data import DaySpec, write_days
    from tests.helpers import FX_SEED, patched_project, set_fx_rate, snapshot

    project = patched_project(settings.PACKAGE_PROJECT_DIR, folder / "project", {})
    os.environ[settings.PROJECT_DIR_ENV] = str(project)
    start = date(2025, 1, 1)
    end = start + timedelta(days=args.days - 1)
    corrected = start + timedelta(days=args.days // 2)
    write_days(landing, start, args.days, DaySpec(payments=args.payments))
    common = {"start": start, "end": end, "retries": 1}
    with prefect_test_harness(server_startup_timeout=120):
        run_flow(backfill, **common, confirm=True)
        set_fx_rate(project / FX_SEED, corrected, "EUR", Decimal("1.234567"))
        per_seed.parent.mkdir(parents=True)
        shutil.copy(per_day, per_seed)

        clock = time.monotonic()
        plan = run_flow(backfill, **common, dry_run=True).plan
        plan_seconds = time.monotonic() - clock
        stale = sorted(day for day, state in plan.states.items() if state == DayState.STALE)

        clock = time.monotonic()
        day_report = run_flow(backfill, **common, confirm=True)
        day_seconds = time.monotonic() - clock

        os.environ["REFILL_WAREHOUSE"] = str(per_seed)
        clock = time.monotonic()
        seed_report = run_flow(backfill, **common, restate=True, confirm=True)
        seed_seconds = time.monotonic() - clock
    same = snapshot(per_day) == snapshot(per_seed)
    print(
        f"{args.days} days x {args.payments} payments, the EUR rate of {corrected} corrected: "
        f"the plan ({plan_seconds:.1f}s) finds {len(stale)} stale day(s), "
        f"{stale[0]}..{stale[-1]}; per day: {len(day_report.published)} day(s) rebuilt in "
        f"{day_seconds:.1f}s (refill's count {day_report.seconds:.1f}s); per seed: "
        f"{len(seed_report.published)} day(s) in {seed_seconds:.1f}s (refill's count "
        f"{seed_report.seconds:.1f}s); same warehouse: {same}"
    )
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
