"""The `refill` command line: a thin layer over the flows and the status queries.

Every command says what it is about to do, and on failure prints one line,
`refill: error: ...`, once, and exits non-zero (refill.errors says which status: 2 for a
usage error, 1 for a failure or refusal about the data, 130 when interrupted); the
warehouse is then as it was. Prefect's log and the flow run's state keep the detail.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.metadata
import os
import shlex
import sys
from datetime import UTC, datetime, timedelta

from refill import interrupts, options, settings
from refill.cli_options import (
    DefaultsShown,
    OneLineParser,
    chunk_options,
    day_type,
    preview_options,
    retry_options,
    version_line,
)
from refill.cli_preview import preview_sign_off, print_preview
from refill.errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PIPE_CLOSED,
    RefillError,
)
from refill.rules import planning

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


def _command_line() -> str:
    return shlex.join(["refill", *sys.argv[1:]])


def _start_the_server() -> None:
    """Start the temporary Prefect server in the background as soon as the command's own
    input is valid, before Prefect, dbt and the flows are imported (seconds): the server
    starts while they import and the dbt project parses, and the command waits for the
    longer of the two, not for the server after them. A signal from here until the
    command arms its handlers still ends it at once, the server stopped with it."""
    from flows import prefect_server

    prefect_server.start_in_background()


def _start_flow_command(select: str | None = None) -> None:
    """What a flow command does once its options are valid: start the temporary Prefect
    server in the background (if not started yet), arm Ctrl-C and SIGTERM, and meanwhile
    parse the dbt project (and resolve --select), so a typo is reported without waiting
    for the server."""
    from flows import prefect_server, signals
    from refill.warehouse.dbt_runner import shared_project

    _start_the_server()
    prefect_server.keep_only_if_needed()
    signals.arm()
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
    from refill.rules.plan import PlanOptions
    from refill.warehouse.dbt_runner import shared_project

    plan_options = PlanOptions(
        chunk_days=args.chunk_days,
        chunk_lines=args.chunk_lines,
        order=args.order,
        restate=args.restate,
        on_missing=args.on_missing,
    )
    _, _, plan = plan_backfill(shared_project(), window, args.select, plan_options)
    if plan.restated:
        print("\n".join(plan.describe()))
        refuse_unsigned_restatement(plan)


def cmd_daily(args: argparse.Namespace) -> int:
    day = (
        planning.parse_day("date", args.date)
        if args.date
        else datetime.now(UTC).date() - timedelta(days=1)
    )
    print(f"refill daily: building logical date {day} (wait for the file up to {args.wait:g}s)")
    _start_the_server()
    from flows.daily import daily
    from flows.tasks import run_flow
    from flows.terminal import show_failures_once

    _start_flow_command()
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
        command_line=_command_line(),
    )
    print(f"refill daily: {report.message} in {report.seconds:.1f}s")
    return EXIT_OK


def cmd_backfill(args: argparse.Namespace) -> int:
    window = planning.parse_range(args.start, args.end)
    confirm = preview_sign_off(args)  # refused before the server starts
    _start_the_server()
    from flows.backfill import backfill
    from flows.tasks import run_flow
    from flows.terminal import show_failures_once

    print(
        f"refill backfill: {window} {args.order}, chunks of up to {args.chunk_days} day(s)"
        + (f" and {args.chunk_lines:,} lines" if args.chunk_lines else "")
        + f", on-missing {args.on_missing}"
        + (", restating published days" if args.restate else "")
        + (", dry run" if args.dry_run else "")
        + (", as a preview (nothing published)" if args.preview else "")
        + (f", publishing preview {args.from_preview}" if args.from_preview else "")
    )
    _start_flow_command(args.select)
    show_failures_once()
    if not args.yes and not args.dry_run and not args.preview:
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
        confirm=confirm,
        dry_run=args.dry_run,
        on_missing=args.on_missing,
        select=args.select,
        retries=args.retries,
        retry_delay_seconds=args.retry_delay,
        wait_for_late_seconds=args.wait,
        poll_seconds=args.poll,
        lock_wait_seconds=args.lock_wait,
        command_line=_command_line(),
        preview=args.preview,
        expect_change=args.expect_change,
        report_dir=args.report_dir,
    )
    if args.dry_run:
        print("\n".join(report.plan.describe()))
        print("refill backfill: dry run, nothing written")
    elif report.preview is not None:
        print_preview(report.preview)
    else:
        print(f"refill backfill: {report.summary()}")
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from refill.views import status
    from refill.warehouse.dbt_runner import shared_project

    window = status.default_window(datetime.now(UTC).date(), args.start, args.end)
    print(f"refill status: {window}")
    print(f"using the {settings.where_line()}")
    statuses = status.collect_for(shared_project(), window)
    print("\n".join(status.data_as_of_lines()))
    print(status.status_table(statuses))
    return EXIT_OK


def cmd_gaps(args: argparse.Namespace) -> int:
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
    _start_the_server()
    from flows.backfill import backfill
    from flows.tasks import run_flow
    from flows.terminal import show_failures_once

    days = report.days_to_fix
    _start_flow_command()
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
        command_line=_command_line(),
        preview=args.preview,
    )
    if result.preview is not None:
        print_preview(result.preview)
        return EXIT_OK
    print(f"refill gaps --fix: {result.summary()}")
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from refill.demo import prepare_folder, run_demo, use_folder

    folder = prepare_folder(args.folder)  # refuses a folder the demo did not make
    use_folder(folder)
    _start_the_server()
    _start_flow_command()
    return run_demo(folder)


def _main_of(module: str):
    def handler(args: argparse.Namespace) -> int:
        return importlib.import_module(module).main(args)

    return handler


def build_parser(*, this_installation: bool = True) -> argparse.ArgumentParser:
    """The `refill` parser. `this_installation`: the help names the project, target and
    warehouse this process would use (left out of the generated CLI reference, which must
    not depend on the machine that wrote it)."""
    where = f" Uses the {settings.where_line()}" if this_installation else ""
    parser = OneLineParser(
        prog="refill",
        description="Safe backfills and reruns of partitioned data.",
        epilog="exit status: 0 ok, 1 a failure or refusal (gaps: gaps found), 2 a usage "
        f"error, 130 interrupted.{where}",
        formatter_class=DefaultsShown,
    )
    parser.add_argument("--version", action="version", version=version_line())
    commands = parser.add_subparsers(
        dest="command",
        required=True,
        parser_class=functools.partial(OneLineParser, formatter_class=DefaultsShown),
    )

    daily = commands.add_parser("daily", help="build one logical date")
    daily.add_argument("--date", help="logical date YYYY-MM-DD (default: yesterday, UTC)")
    daily.add_argument(
        "--wait",
        type=float,
        default=settings.DAILY_BY_HAND_WAIT_SECONDS,
        help="seconds to wait for the file",
    )
    daily.add_argument(
        "--poll",
        type=float,
        default=settings.READY_POLL_SECONDS,
        help="seconds between readiness checks",
    )
    daily.add_argument("--yes", action="store_true", help="sign off restating a published --date")
    retry_options(daily, settings.DAILY_LOCK_WAIT_SECONDS)
    daily.set_defaults(handler=cmd_daily)

    backfill = commands.add_parser("backfill", help="rebuild an explicit range in chunks")
    backfill.add_argument("--start", help="first day, YYYY-MM-DD (required)")
    backfill.add_argument("--end", help="last day, YYYY-MM-DD, inclusive (required)")
    backfill.add_argument(
        "--order",
        default=settings.BACKFILL_ORDER,
        choices=planning.ORDERS,
        help="which chunks first",
    )
    chunk_options(backfill)
    backfill.add_argument(
        "--max-concurrency",
        type=int,
        default=1,
        help="chunks at once; on DuckDB one chunk at a time (one process writes the file; "
        "DuckDB uses every core inside a chunk): the value is recorded in the run log",
    )
    backfill.add_argument(
        "--restate", action="store_true", help="rebuild published days that are current"
    )
    backfill.add_argument("--yes", action="store_true", help="sign off restating published days")
    backfill.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    preview_options(backfill)
    backfill.add_argument(
        "--on-missing",
        default=settings.ON_MISSING,
        choices=planning.ON_MISSING,
        help="a day not ready: stop before it, skip it, or wait for it",
    )
    backfill.add_argument("--select", help="dbt selection; downstream models come along")
    backfill.add_argument(
        "--wait",
        type=float,
        default=settings.READY_WAIT_SECONDS,
        help="--on-missing wait: seconds to wait",
    )
    backfill.add_argument(
        "--poll",
        type=float,
        default=settings.READY_POLL_SECONDS,
        help="--on-missing wait: seconds between checks",
    )
    retry_options(backfill, settings.BACKFILL_LOCK_WAIT_SECONDS)
    backfill.set_defaults(handler=cmd_backfill)

    for name, handler, text in (
        ("status", cmd_status, "a table per day: ready, state, code version, rows vs source"),
        ("gaps", cmd_gaps, "missing, failed and stale days, and hour holes; exit 1 if any"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument(
            "--start",
            type=day_type("start"),
            help=f"first day, YYYY-MM-DD (default: {settings.STATUS_DAYS} days before --end)",
        )
        command.add_argument("--end", type=day_type("end"), help="last day (default: yesterday)")
        if name == "gaps":
            command.add_argument("--fix", action="store_true", help="backfill them, newest-first")
            command.add_argument("--yes", action="store_true", help="sign off restating")
            command.add_argument(
                "--preview",
                action="store_true",
                help="build the fixes and keep them unpublished: a report of old vs new",
            )
            command.add_argument(
                "--min-hole-hours",
                type=int,
                default=settings.MIN_HOLE_HOURS,
                help="report hour holes this long",
            )
            chunk_options(command)
            retry_options(command, settings.BACKFILL_LOCK_WAIT_SECONDS)  # --fix runs a backfill
        command.set_defaults(handler=handler)

    for name, module, text in (
        ("cutover", "refill.cutover", "switch a versioned model's readers to a version"),
        ("board", "refill.views.board", "the partition board: an HTML page of the days"),
        ("ci", "refill.ci", "what a pull request does to the published numbers, vs a base ref"),
    ):
        command = commands.add_parser(name, help=text, arguments_from=module)
        command.set_defaults(handler=_main_of(module))

    demo = commands.add_parser("demo", help="a week of daily runs, a late file, a backfill")
    demo.add_argument(
        "--folder",
        default=settings.DEFAULT_DEMO_FOLDER,
        help="where the demo writes; wiped, if the demo made it",
    )
    demo.set_defaults(handler=cmd_demo)
    return parser


def main(argv: list[str] | None = None, *, as_program: bool = False) -> int:
    """Run one command and return its exit status. `as_program` (the `refill` program, the
    harness's child process): a signal after the command ended exits with this status."""
    interrupts.stop_at_once_until_armed()
    parser = build_parser()
    status = EXIT_INTERRUPTED  # if anything escapes, the `finally` still has a status
    try:
        args = parser.parse_args(argv)
        options.check(vars(args))  # every option's value, before anything runs
        status = args.handler(args)
    except BrokenPipeError:
        status = _output_closed()
    except RefillError as error:
        print(f"refill: error: {error}", file=sys.stderr)
        status = error.exit_code
    except interrupts.Interrupted as stop:
        # the first Ctrl-C or SIGTERM, at a safe point: the run is closed, this is its summary
        print(f"refill: {stop}", flush=True)
        status = EXIT_INTERRUPTED
    finally:
        interrupts.disarm(exit_status=status if as_program else None)
    return status


def _output_closed() -> int:
    """The reader of the output went away (`refill status | head -1`): stop quietly. What
    is still buffered for it goes nowhere, and so does anything printed after."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_PIPE_CLOSED


def program() -> None:
    """The `refill` console script."""
    interrupts.end_process(main(as_program=True))


if __name__ == "__main__":
    program()
