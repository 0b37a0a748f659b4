"""`refill backfill`: rebuild an explicit range in chunks (or preview it, or publish a
preview)."""

from __future__ import annotations

import argparse

from refill import settings
from refill.cli.parser import chunk_options, preview_options, retry_options
from refill.cli.preview import preview_sign_off, print_preview
from refill.cli.runs import command_line, start_flow_command, start_the_server
from refill.errors import EXIT_OK
from refill.rules import planning


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--start", help="first day, YYYY-MM-DD (required)")
    parser.add_argument("--end", help="last day, YYYY-MM-DD, inclusive (required)")
    parser.add_argument(
        "--order",
        default=settings.BACKFILL_ORDER,
        choices=planning.ORDERS,
        help="which chunks first",
    )
    chunk_options(parser)
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=1,
        help="chunks at once; on DuckDB one chunk at a time (one process writes the file; "
        "DuckDB uses every core inside a chunk): the value is recorded in the run log",
    )
    parser.add_argument(
        "--restate", action="store_true", help="rebuild published days that are current"
    )
    parser.add_argument("--yes", action="store_true", help="sign off restating published days")
    parser.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    preview_options(parser)
    parser.add_argument(
        "--on-missing",
        default=settings.ON_MISSING,
        choices=planning.ON_MISSING,
        help="a day not ready: stop before it, skip it, or wait for it",
    )
    parser.add_argument("--select", help="dbt selection; downstream models come along")
    parser.add_argument(
        "--wait",
        type=float,
        default=settings.READY_WAIT_SECONDS,
        help="--on-missing wait: seconds to wait",
    )
    parser.add_argument(
        "--poll",
        type=float,
        default=settings.READY_POLL_SECONDS,
        help="--on-missing wait: seconds between checks",
    )
    retry_options(parser, settings.BACKFILL_LOCK_WAIT_SECONDS)


def main(args: argparse.Namespace) -> int:
    window = planning.parse_range(args.start, args.end)
    confirm = preview_sign_off(args)  # refused before the server starts
    start_the_server()
    from flows.backfill import backfill
    from flows.backfill_plan import plan_backfill, refuse_unsigned_restatement
    from flows.tasks import run_flow
    from flows.terminal import show_failures_once
    from refill.rules.plan import PlanOptions
    from refill.warehouse.dbt_runner import shared_project

    print(
        f"refill backfill: {window} {args.order}, chunks of up to {args.chunk_days} day(s)"
        + (f" and {args.chunk_lines:,} lines" if args.chunk_lines else "")
        + f", on-missing {args.on_missing}"
        + (", restating published days" if args.restate else "")
        + (", dry run" if args.dry_run else "")
        + (", as a preview (nothing published)" if args.preview else "")
        + (f", publishing preview {args.from_preview}" if args.from_preview else "")
    )
    start_flow_command()
    show_failures_once()
    # Planned once, here, while the server starts (the selection resolved with it); the
    # flow runs this plan. A plan that restates published days without --yes is refused
    # now, after its plan, not after the server.
    planned = plan_backfill(
        shared_project(),
        window,
        args.select,
        PlanOptions(
            chunk_days=args.chunk_days,
            chunk_lines=args.chunk_lines,
            order=args.order,
            restate=args.restate,
            on_missing=args.on_missing,
        ),
    )
    if planned.plan.restated and not (args.yes or args.dry_run or args.preview):
        print("\n".join(planned.plan.describe()))
        refuse_unsigned_restatement(planned.plan)
    report = run_flow(
        backfill,
        start=window.start,
        end=window.end,
        order=args.order,
        chunk_days=args.chunk_days,
        chunk_lines=args.chunk_lines,
        max_concurrency=args.max_concurrency,
        restate=args.restate,
        confirm=confirm,
        dry_run=args.dry_run,
        on_missing=args.on_missing,
        select=args.select,
        retries=args.retries,
        retry_delay_seconds=args.retry_delay,
        wait_for_late_seconds=args.wait,
        poll_seconds=args.poll,
        lock_wait_seconds=args.lock_wait,
        command_line=command_line(),
        preview=args.preview,
        expect_change=args.expect_change,
        report_dir=args.report_dir,
        planned=planned,
    )
    if args.dry_run:
        print("\n".join(report.plan.describe()))
        print("refill backfill: dry run, nothing written")
    elif report.preview is not None:
        print_preview(report.preview)
    else:
        print(f"refill backfill: {report.summary()}")
    return EXIT_OK
