"""The scheduled run: one logical date, gated on readiness, built as a window of one day."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from prefect import flow, get_run_logger
from prefect.runtime import flow_run

from flows import board, interrupts, locking, notify, ops, readiness, run_liveness, settings
from flows.dbt_runner import shared_project
from flows.errors import RefillError
from flows.planning import Chunk, parse_day
from flows.sample_data import DATASET
from flows.tasks import (
    ChunkFailed,
    RunContext,
    build_window,
    combined_code_version,
    fault_from_environment,
    prepare_warehouse,
    record_interrupted_attempt,
    refusals_fail_the_run,
    send_notification,
    with_warehouse,
)

DEPLOYMENT_READY_WAIT_SECONDS = 3 * 3600


@dataclass
class DailyReport:
    logical_date: date
    outcome: str
    rows: int
    seconds: float
    message: str


def logical_date_for(scheduled_start: datetime | None, explicit: date | str | None) -> date:
    """The run's logical date: given explicitly, or the day before the scheduled start.

    A run scheduled for 2026-01-08 03:00 processes 2026-01-07, whenever it really starts.
    """
    if explicit is not None:
        return parse_day("date", explicit)
    if scheduled_start is None:
        raise RefillError("no logical date: pass --date YYYY-MM-DD (or run from a schedule)")
    return scheduled_start.date() - timedelta(days=1)


def wait_until_ready(
    day: date, wait_seconds: float, poll_seconds: float, logger
) -> readiness.DayReadiness:
    """Poll the readiness rule until the day is ready or the wait is over."""
    deadline = time.monotonic() + wait_seconds
    while True:
        verdict = readiness.day_readiness(settings.landing_root(), DATASET, day)
        if verdict.is_ready or time.monotonic() >= deadline:
            return verdict
        logger.info("%s not ready (%s); checking again in %gs", day, verdict.reason, poll_seconds)
        with interrupts.interruptible(f"waiting for {day} to be ready"):
            time.sleep(min(poll_seconds, max(deadline - time.monotonic(), 0)))


@flow(name="refill-daily")
@refusals_fail_the_run
@interrupts.end_as_cancelled
@run_liveness.released_at_end
def daily(
    logical_date: date | None = None,
    wait_for_ready_seconds: float = DEPLOYMENT_READY_WAIT_SECONDS,
    poll_seconds: float = 300,
    lock_wait_seconds: float = 900,
    retries: int = 3,
    retry_delay_seconds: list[float] | None = None,
    command_line: str = "refill daily (deployment)",
) -> DailyReport:
    """Build one logical date. Fails loudly, and notifies, when its file has not landed."""
    logger = get_run_logger()
    clock = time.monotonic()
    day = logical_date_for(flow_run.scheduled_start_time, logical_date)
    run_id = str(flow_run.id or f"local-{day}")
    project = shared_project()
    context = RunContext(
        run_id=run_id,
        command="daily",
        priority=locking.LIVE,
        is_backfill=False,
        select=None,
        lock_wait_seconds=lock_wait_seconds,
        fault=fault_from_environment(),
    )
    logger.info("daily run for logical date %s (run %s)", day, run_id)
    prepare_warehouse(project, context)
    code_version = combined_code_version(project.code_versions())
    parameters = {"logical_date": day, "wait_for_ready_seconds": wait_for_ready_seconds}
    run_liveness.hold(settings.warehouse_path(), run_id)  # before the run log says `running`
    with_warehouse(
        context,
        lambda c: ops.record_run_start(c, run_id, "daily", command_line, parameters),
    )

    def finish(outcome: str, message: str, rows: int = 0) -> DailyReport:
        with_warehouse(context, lambda c: ops.record_run_end(c, run_id, outcome, [day], message))
        send_notification(
            context, notify.Notification("daily", day, outcome, code_version, message)
        )
        # The Prefect UI shows the week's board beside the run.
        board.publish_artifact(board.week_ending(day), key="refill-daily-board")
        return DailyReport(day, outcome, rows, time.monotonic() - clock, message)

    try:
        verdict = wait_until_ready(day, wait_for_ready_seconds, poll_seconds, logger)
    except interrupts.Interrupted as stop:
        raise _close_interrupted(context, day, stop) from None
    if not verdict.is_ready:
        message = (
            f"daily {day}: payments not ready ({verdict.reason}) after waiting "
            f"{wait_for_ready_seconds:g}s; nothing written. Rerun when the export lands."
        )
        now = ops.utc_now()
        with_warehouse(
            context,
            lambda c: ops.record_attempt(
                c,
                [day],
                ops.Attempt(run_id, "daily", day, day, 1, "not ready", verdict.reason, now, now),
            ),
        )
        finish("not ready", message)
        raise RefillError(message)

    delays = retry_delay_seconds if retry_delay_seconds is not None else [300, 600]
    builder = build_window.with_options(retries=max(retries - 1, 0), retry_delay_seconds=delays)
    try:
        # a stop asked between attempts ends the wait; a build once started finishes whole
        with interrupts.interruptible(f"at {day}"):
            result = builder(project, context, Chunk(day, day))
    except interrupts.Interrupted as stop:
        record_interrupted_attempt(context, Chunk(day, day))
        raise _close_interrupted(context, day, stop) from None
    except ChunkFailed as failure:
        message = (
            f"daily {day}: {failure}; the previous data stands. Rerun `refill daily --date {day}`."
        )
        finish("failed", message)
        raise RefillError(message) from None
    message = f"daily {day}: published {result.rows} payments"
    logger.info(message)
    return finish("succeeded", message, result.rows)


def _close_interrupted(
    context: RunContext, day: date, stop: interrupts.Interrupted
) -> interrupts.Interrupted:
    """Close the run log as interrupted: nothing of the day was written by this run."""
    message = f"daily {day}: {stop}; nothing written. Rerun `refill daily --date {day}`."
    get_run_logger().warning(message)
    with_warehouse(
        context, lambda c: ops.record_run_end(c, context.run_id, "interrupted", [], message)
    )
    return interrupts.Interrupted(message)
