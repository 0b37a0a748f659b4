"""`refill demo`: the week an on-call engineer would rather read about than live through.

On a fresh warehouse and generated landing data (replays, malformed lines, one late
day): a week of daily runs, the late day failing loudly and notifying; the file
lands; a newest-first backfill fills the hole; a rerun changes nothing; the status.
"""

from __future__ import annotations

import argparse
import os
import shutil
from datetime import date, timedelta
from pathlib import Path

from refill import settings
from refill.cli.runs import start_flow_command, start_the_server
from refill.errors import RefillError
from refill.sample_data import DaySpec, write_day

WEEK_START = date(2026, 1, 5)
LATE_DAY = date(2026, 1, 8)
PAYMENTS_A_DAY = 2000
# Written into a folder the demo makes; the demo wipes only a folder that holds it.
MARKER = ".refill-demo"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--folder",
        default=settings.DEFAULT_DEMO_FOLDER,
        help="where the demo writes; wiped, if the demo made it",
    )


def main(args: argparse.Namespace) -> int:
    folder = prepare_folder(args.folder)  # refuses a folder the demo did not make
    use_folder(folder)
    start_the_server()
    start_flow_command()
    return run_demo(folder)


def _step(text: str) -> None:
    print(f"\n==> {text}", flush=True)


def prepare_folder(folder: str | Path) -> Path:
    """An empty demo folder: made now, or a previous demo's, wiped. A folder the demo did
    not make (no marker) is refused, whatever it holds: --folder may be mistyped."""
    root = Path(folder).expanduser()
    root = root if root.is_absolute() else settings.project_dir() / root
    if root.exists() or root.is_symlink():
        if root.is_symlink() or not (root / MARKER).is_file():
            raise RefillError(
                f"--folder {folder}: {root} exists and was not made by `refill demo` "
                f"(no {MARKER} in it); the demo wipes its folder, so name a new one"
            )
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / MARKER).write_text("made by `refill demo`; the next demo here wipes this folder\n")
    return root


def use_folder(root: Path) -> None:
    """Point the landing and the warehouse into the demo's folder (before dbt parses)."""
    os.environ["REFILL_LANDING"] = str(root / "landing")
    os.environ["REFILL_WAREHOUSE"] = str(root / "warehouse" / "refill.duckdb")


def run_demo(root: Path) -> int:
    """The demo, in a folder from prepare_folder."""
    use_folder(root)
    from flows.backfill import backfill
    from flows.daily import daily
    from flows.tasks import run_flow
    from refill.rules.planning import DateRange
    from refill.views import status
    from refill.warehouse.dbt_runner import shared_project

    week = [WEEK_START + timedelta(days=n) for n in range(7)]
    spec = DaySpec(payments=PAYMENTS_A_DAY, replay_rate=0.02, malformed_rate=0.005)
    _step(f"landing a week of payments under {settings.landing_root()} ({LATE_DAY} is late)")
    for day in week:
        write_day(
            settings.landing_root(),
            day,
            DaySpec(**{**vars(spec), "write_manifest": day != LATE_DAY}),
        )

    _step("a week of scheduled daily runs, one per logical date")
    for day in week:
        try:
            report = run_flow(
                daily,
                logical_date=day,
                wait_for_ready_seconds=0,
                retries=1,
                command_line=f"refill demo: refill daily --date {day}",
            )
            print(f"    {day}: {report.message}")
        except RefillError as error:
            print(f"    {day}: FAILED LOUDLY: {error}")

    _step(f"the late file for {LATE_DAY} lands")
    write_day(settings.landing_root(), LATE_DAY, spec)

    _step(f"backfill {week[0]}..{week[-1]} newest-first: only the hole is built")
    backfill_line = f"refill demo: refill backfill --start {week[0]} --end {week[-1]}"
    first = run_flow(
        backfill,
        start=week[0],
        end=week[-1],
        order="newest-first",
        retries=1,
        command_line=backfill_line,
    )
    print(f"    {first.summary()}")

    _step("the same backfill again: a rerun changes nothing")
    again = run_flow(
        backfill,
        start=week[0],
        end=week[-1],
        order="newest-first",
        retries=1,
        command_line=backfill_line,
    )
    print(f"    {again.summary()}")

    _step("refill status")
    window = DateRange(week[0], week[-1])
    print("\n".join(status.data_as_of_lines()))
    print(status.status_table(status.collect_for(shared_project(), window)))
    print(f"\nwarehouse: {settings.warehouse_path()}")
    return 0
