"""`refill gaps`: missing, failed and stale days and hour holes (exit 1 if any), and with
--fix a newest-first backfill of the days refill can fix."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from refill import settings
from refill.cli.parser import chunk_options, retry_options, window_options
from refill.cli.preview import print_preview
from refill.cli.runs import command_line, start_flow_command, start_the_server
from refill.errors import EXIT_FAILURE, EXIT_OK


def add_arguments(parser: argparse.ArgumentParser) -> None:
    window_options(parser)
    parser.add_argument("--fix", action="store_true", help="backfill them, newest-first")
    parser.add_argument("--yes", action="store_true", help="sign off restating")
    parser.add_argument(
        "--preview",
        action="store_true",
        help="build the fixes and keep them unpublished: a report of old vs new",
    )
    parser.add_argument(
        "--min-hole-hours",
        type=int,
        default=settings.MIN_HOLE_HOURS,
        help="report hour holes this long",
    )
    chunk_options(parser)
    retry_options(parser, settings.BACKFILL_LOCK_WAIT_SECONDS)  # --fix runs a backfill


def main(args: argparse.Namespace) -> int:
    from refill.views import status
    from refill.warehouse.dbt_runner import shared_project

    window = status.default_window(datetime.now(UTC).date(), args.start, args.end)
    print(f"refill gaps: {window} (hour holes of {args.min_hole_hours}h or more)")
    statuses = status.collect_for(shared_project(), window)
    holes = status.find_hour_holes(status.read_hourly_counts(window), args.min_hole_hours)
    report = status.find_gaps(statuses, holes)
    print("\n".join(report.lines()))
    # Gaps found and not fixed: exit 1, for CI and cron. A day not landed yet is not a
    # gap refill can fix; it is listed, and does not change the status.
    found = EXIT_FAILURE if report.days_to_fix else EXIT_OK
    if not args.fix or not report.days_to_fix:
        return found
    start_the_server()
    from flows.backfill import backfill
    from flows.tasks import run_flow
    from flows.terminal import show_failures_once

    days = report.days_to_fix
    start_flow_command()
    print(
        f"refill gaps --fix: rebuilding {len(days)} day(s) newest-first"
        + (", as a preview (nothing published)" if args.preview else "")
    )
    show_failures_once()
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
        lock_wait_seconds=args.lock_wait,
        command_line=command_line(),
        preview=args.preview,
    )
    if result.preview is not None:
        print_preview(result.preview)
        return EXIT_OK
    print(f"refill gaps --fix: {result.summary()}")
    return EXIT_OK
