"""The `refill` command line: a thin layer over the flows and the status queries.

Every command says what it is about to do, and on failure prints one line,
`refill: error: ...`, and exits non-zero; the warehouse is then as it was.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from datetime import UTC, datetime, timedelta

from flows import interrupts, planning
from flows.backfill import DEFAULT_CHUNK_DAYS, DEFAULT_CHUNK_LINES
from flows.errors import RefillError

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"refill: error: {message} (see `{self.prog} --help`)\n")


def _delays(raw: str) -> list[float]:
    try:
        return [float(part) for part in raw.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{raw!r} is not a comma-separated list of seconds"
        ) from None


def _command_line() -> str:
    return shlex.join(["refill", *sys.argv[1:]])


def _start_flow_command(select: str | None = None) -> None:
    """What a flow command does once its options are valid: arm Ctrl-C and SIGTERM, start
    the temporary Prefect server in the background, and meanwhile parse the dbt project
    (and resolve --select), so a typo is reported without waiting for the server."""
    from flows import prefect_server
    from flows.dbt_runner import shared_project

    interrupts.arm()
    prefect_server.start_in_background()
    project = shared_project()
    if select:
        project.resolve_selection(select)
    else:
        project.manifest  # noqa: B018 (parsed now, while the server starts)
    interrupts.raise_if_requested("before the run started")


def _refuse_before_the_run(window: planning.DateRange, args: argparse.Namespace) -> None:
    """Plan the backfill now, while the Prefect server starts: a plan that restates
    published days without --yes is refused here, after its plan, not after the server."""
    from flows.backfill import plan_backfill, refuse_unsigned_restatement
    from flows.dbt_runner import shared_project

    _, _, plan = plan_backfill(
        shared_project(),
        window,
        args.select,
        chunk_days=args.chunk_days,
        chunk_lines=args.chunk_lines,
        order=args.order,
        restate=args.restate,
        on_missing=args.on_missing,
    )
    if plan.restated:
        print("\n".join(plan.describe()))
        refuse_unsigned_restatement(plan)


def cmd_daily(args: argparse.Namespace) -> int:
    from flows.daily import daily
    from flows.tasks import run_flow

    day = (
        planning.parse_day("date", args.date)
        if args.date
        else datetime.now(UTC).date() - timedelta(days=1)
    )
    print(f"refill daily: building logical date {day} (wait for the file up to {args.wait:g}s)")
    _start_flow_command()
    report = run_flow(
        daily,
        logical_date=day,
        wait_for_ready_seconds=args.wait,
        poll_seconds=args.poll,
        lock_wait_seconds=args.lock_wait,
        retries=args.retries,
        retry_delay_seconds=args.retry_delay,
        command_line=_command_line(),
    )
    print(f"refill daily: {report.message} in {report.seconds:.1f}s")
    return 0


def cmd_backfill(args: argparse.Namespace) -> int:
    window = planning.parse_range(args.start, args.end)
    planning.validate_options(
        args.order, args.chunk_days, args.max_concurrency, args.on_missing, args.chunk_lines
    )
    from flows.backfill import backfill
    from flows.tasks import run_flow

    print(
        f"refill backfill: {window} {args.order}, chunks of up to {args.chunk_days} day(s)"
        + (f" and {args.chunk_lines:,} lines" if args.chunk_lines else "")
        + f", on-missing {args.on_missing}"
        + (", restating published days" if args.restate else "")
        + (", dry run" if args.dry_run else "")
    )
    _start_flow_command(args.select)
    if not args.yes and not args.dry_run:
        _refuse_before_the_run(window, args)
    report = run_flow(
        backfill,
        start=window.start,
        end=window.end,
        order=args.order,
        chunk_days=args.chunk_days,
        chunk_lines=args.chunk_lines,
        max_concurrency=args.max_concurrency,
        restate=args.restate,
        confirm=args.yes,
        dry_run=args.dry_run,
        on_missing=args.on_missing,
        select=args.select,
        retries=args.retries,
        retry_delay_seconds=args.retry_delay,
        wait_for_late_seconds=args.wait,
        poll_seconds=args.poll,
        lock_wait_seconds=args.lock_wait,
        command_line=_command_line(),
    )
    if args.dry_run:
        print("\n".join(report.plan.describe()))
        print("refill backfill: dry run, nothing written")
    else:
        print(f"refill backfill: {report.summary()}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from flows import status
    from flows.dbt_runner import shared_project

    window = status.default_window(datetime.now(UTC).date(), args.start, args.end)
    print(f"refill status: {window}")
    statuses = status.collect_for(shared_project(), window)
    print("\n".join(status.data_as_of_lines()))
    print(status.status_table(statuses))
    return 0


def cmd_gaps(args: argparse.Namespace) -> int:
    from flows import status
    from flows.dbt_runner import shared_project

    window = status.default_window(datetime.now(UTC).date(), args.start, args.end)
    print(f"refill gaps: {window} (hour holes of {args.min_hole_hours}h or more)")
    statuses = status.collect_for(shared_project(), window)
    holes = status.find_hour_holes(status.read_hourly_counts(window), args.min_hole_hours)
    report = status.find_gaps(statuses, holes)
    print("\n".join(report.lines()))
    if not args.fix or not report.days_to_fix:
        return 0
    from flows.backfill import backfill
    from flows.tasks import run_flow

    days = report.days_to_fix
    _start_flow_command()
    print(f"refill gaps --fix: rebuilding {len(days)} day(s) newest-first")
    result = run_flow(
        backfill,
        start=days[0],
        end=days[-1],
        order="newest-first",
        chunk_days=args.chunk_days,
        chunk_lines=args.chunk_lines,
        confirm=args.yes,
        only_days=days,
        retries=args.retries,
        retry_delay_seconds=args.retry_delay,
        command_line=_command_line(),
    )
    print(f"refill gaps --fix: {result.summary()}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from flows.demo import prepare_folder, run_demo, use_folder

    folder = prepare_folder(args.folder)  # refuses a folder the demo did not make
    use_folder(folder)
    _start_flow_command()
    return run_demo(folder)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="refill", description="Safe backfills and reruns of partitioned data."
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    def chunk_options(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--chunk-days",
            type=int,
            default=DEFAULT_CHUNK_DAYS,
            help=f"at most this many days per dbt invocation ({DEFAULT_CHUNK_DAYS})",
        )
        command.add_argument(
            "--chunk-lines",
            type=int,
            default=DEFAULT_CHUNK_LINES,
            help=f"at most this many landed lines per chunk, 0: no limit ({DEFAULT_CHUNK_LINES})",
        )

    def retry_options(command: argparse.ArgumentParser) -> None:
        command.add_argument("--retries", type=int, default=3, help="attempts per chunk (3)")
        command.add_argument(
            "--retry-delay",
            type=_delays,
            default=[300.0, 600.0],
            help="seconds between attempts, comma-separated (300,600)",
        )
        command.add_argument(
            "--lock-wait", type=float, default=900, help="seconds to wait for the warehouse"
        )

    daily = commands.add_parser("daily", help="build one logical date")
    daily.add_argument("--date", help="logical date YYYY-MM-DD (default: yesterday, UTC)")
    daily.add_argument(
        "--wait", type=float, default=0, help="seconds to wait for the file (default 0)"
    )
    daily.add_argument("--poll", type=float, default=60, help="seconds between readiness checks")
    retry_options(daily)
    daily.set_defaults(handler=cmd_daily)

    backfill = commands.add_parser("backfill", help="rebuild an explicit range in chunks")
    backfill.add_argument("--start", help="first day, YYYY-MM-DD (required)")
    backfill.add_argument("--end", help="last day, YYYY-MM-DD, inclusive (required)")
    backfill.add_argument("--order", default="newest-first", help="newest-first | oldest-first")
    chunk_options(backfill)
    backfill.add_argument("--max-concurrency", type=int, default=1)
    backfill.add_argument(
        "--restate", action="store_true", help="rebuild published days that are current"
    )
    backfill.add_argument("--yes", action="store_true", help="sign off restating published days")
    backfill.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    backfill.add_argument("--on-missing", default="fail", help="fail | skip | wait")
    backfill.add_argument("--select", help="dbt selection; downstream models come along")
    backfill.add_argument(
        "--wait", type=float, default=3 * 3600, help="--on-missing wait: seconds to wait"
    )
    backfill.add_argument("--poll", type=float, default=300)
    retry_options(backfill)
    backfill.set_defaults(handler=cmd_backfill)

    for name, handler, text in (
        ("status", cmd_status, "a table per day: ready, state, code version, rows vs source"),
        ("gaps", cmd_gaps, "missing, failed and stale days, and hour holes in a day"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("--start", type=lambda raw: planning.parse_day("start", raw))
        command.add_argument("--end", type=lambda raw: planning.parse_day("end", raw))
        if name == "gaps":
            command.add_argument("--fix", action="store_true", help="backfill them, newest-first")
            command.add_argument("--yes", action="store_true", help="sign off restating")
            command.add_argument("--min-hole-hours", type=int, default=3)
            chunk_options(command)
            retry_options(command)
        command.set_defaults(handler=handler)

    from flows import cutover

    cut = commands.add_parser("cutover", help="switch a versioned model's readers to a version")
    cutover.add_arguments(cut)
    cut.set_defaults(handler=cutover.main)

    from flows import board

    pictured = commands.add_parser("board", help="the partition board: an HTML page of the days")
    board.add_arguments(pictured)
    pictured.set_defaults(handler=board.main)

    demo = commands.add_parser("demo", help="a week of daily runs, a late file, a backfill")
    demo.add_argument(
        "--folder",
        default="data/demo",
        help="where the demo writes; wiped, if the demo made it (default: data/demo)",
    )
    demo.set_defaults(handler=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return args.handler(args)
    except RefillError as error:
        print(f"refill: error: {error}", file=sys.stderr)
        return 1
    except interrupts.Interrupted as stop:
        # the first Ctrl-C or SIGTERM, at a safe point: the run is closed, this is its summary
        print(f"refill: {stop}", flush=True)
        return interrupts.EXIT_CODE
    finally:
        interrupts.disarm()


if __name__ == "__main__":
    sys.exit(main())
