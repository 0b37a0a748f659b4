"""`refill daily`: build one logical date (the scheduled run, or a date given by hand)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

from refill import settings
from refill.cli.parser import retry_options
from refill.cli.runs import command_line, start_flow_command, start_the_server
from refill.errors import EXIT_OK
from refill.rules import planning


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--date", help="logical date YYYY-MM-DD (default: yesterday, UTC)")
    parser.add_argument(
        "--wait",
        type=float,
        default=settings.DAILY_BY_HAND_WAIT_SECONDS,
        help="seconds to wait for the file",
    )
    parser.add_argument(
        "--poll",
        type=float,
        default=settings.READY_POLL_SECONDS,
        help="seconds between readiness checks",
    )
    parser.add_argument("--yes", action="store_true", help="sign off restating a published --date")
    retry_options(parser, settings.DAILY_LOCK_WAIT_SECONDS)


def main(args: argparse.Namespace) -> int:
    day = (
        planning.parse_day("date", args.date)
        if args.date
        else datetime.now(UTC).date() - timedelta(days=1)
    )
    print(f"refill daily: building logical date {day} (wait for the file up to {args.wait:g}s)")
    start_the_server()
    from flows.daily import daily
    from flows.tasks import run_flow
    from flows.terminal import show_failures_once

    start_flow_command()
    show_failures_once()
    report = run_flow(
        daily,
        logical_date=day,
        wait_for_ready_seconds=args.wait,
        poll_seconds=args.poll,
        lock_wait_seconds=args.lock_wait,
        retries=args.retries,
        retry_delay_seconds=args.retry_delay,
        # Without --date it is the schedule's own run (yesterday): it signs off its date.
        # A date given by hand that is published restates numbers: --yes, as a backfill.
        confirm=args.yes or not args.date,
        command_line=command_line(),
    )
    print(f"refill daily: {report.message} in {report.seconds:.1f}s")
    return EXIT_OK
