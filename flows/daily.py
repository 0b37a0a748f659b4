"""The scheduled run: one logical date, gated on readiness, built as a window of one day."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from prefect import flow, get_run_logger
from prefect.runtime import flow_run

from flows.lifecycle import ReadyWait, Retries, RunEnding, recorded_run
from flows.signals import end_as_cancelled
from flows.tasks import (
    ChunkFailed,
    RunAccount,
    RunContext,
    combined_code_version,
    record_attempt,
    record_interrupted_attempt,
    refusals_fail_the_run,
    unrecorded_attempt,
    with_warehouse,
)
from refill import interrupts, options, settings
from refill.errors import FailedStep, RefillError
from refill.rules import planning, readiness
from refill.rules.catalog import DayTotals, describe_day_totals
from refill.rules.planning import Chunk, DayState, parse_day
from refill.views import board
from refill.warehouse import locking, ops, partition_status, run_liveness
from refill.warehouse.dbt_runner import DbtProject, shared_project


@dataclass
class DailyReport:
    logical_date: date
    outcome: str
    rows: int
    seconds: float
    message: str
    attempts: int = 0  # build attempts (a transient failure is retried)


def logical_date_for(scheduled_start: datetime | None, explicit: date | str | None) -> date:
    """The run's logical date: given explicitly, or the day before the scheduled start.

    A run scheduled for 2026-01-08 03:00 processes 2026-01-07, whenever it really starts.
    """
    if explicit is not None:
        return parse_day("date", explicit)
    if scheduled_start is None:
        raise RefillError("no logical date: pass --date YYYY-MM-DD (or run from a schedule)")
    return scheduled_start.date() - timedelta(days=1)


def wait_until_ready(day: date, wait: ReadyWait, logger) -> readiness.DayReadiness:
    """Poll the readiness rule until the day is ready or the wait is over."""
    deadline = wait.deadline()
    while True:
        datasets = shared_project().catalog.names
        verdict = readiness.datasets_day_readiness(settings.landing_root(), datasets, day)
        if verdict.is_ready or time.monotonic() >= deadline:
            return verdict
        logger.info(
            "%s not ready (%s); checking again in %gs", day, verdict.reason, wait.poll_seconds
        )
        wait.pause(deadline, f"waiting for {day} to be ready")


def unready_subject(datasets: Sequence[str]) -> str:
    """Who is not ready, in the refusal's words: the one dataset by its name; of several,
    the verdict's reason names the first unready one."""
    return datasets[0] if len(datasets) == 1 else "the day"


def restated_totals(
    project: DbtProject, context: RunContext, day: date
) -> tuple[DayTotals, ...] | None:
    """The day's published totals, per dataset, when building it would restate numbers
    readers have seen (published or stale, as a backfill plans it); None otherwise. Read
    holding the warehouse lock: a read-only DuckDB connection would make a writer in
    another process (a backfill's chunk) fail to open the file."""
    window = planning.DateRange(day, day)
    warehouse = settings.warehouse_path()
    if not warehouse.exists():
        return None
    models, versions = sorted(project.partitioned_models()), project.code_versions()
    with context.lock():
        (status,) = partition_status.collect(
            warehouse,
            settings.landing_root(),
            window,
            models,
            versions,
            project.catalog,
        )
        if status.state not in (DayState.PUBLISHED, DayState.STALE):
            return None
        datasets = project.catalog.datasets  # a daily run builds every dataset
        totals = ops.published_totals(warehouse, datasets, day, day)
        return tuple(DayTotals(d, *totals[d].get(day, (0, 0.0))) for d in datasets)


@flow(name="refill-daily")
@refusals_fail_the_run
@end_as_cancelled
@run_liveness.released_at_end
def daily(
    logical_date: date | None = None,
    wait_for_ready_seconds: float = settings.READY_WAIT_SECONDS,
    poll_seconds: float = settings.READY_POLL_SECONDS,
    lock_wait_seconds: float = settings.DAILY_LOCK_WAIT_SECONDS,
    retries: int = settings.RETRIES,
    retry_delay_seconds: list[float] | None = None,
    confirm: bool = False,
    command_line: str = "refill daily (deployment)",
) -> DailyReport:
    """Build one logical date. Fails loudly, and notifies, when its file has not landed.

    Rebuilding a published day restates numbers readers have seen: a run given its date
    needs `confirm` (`--yes`), as a backfill does; a scheduled run (no date given) signs
    off its own logical date.
    """
    logger = get_run_logger()
    clock = time.monotonic()
    options.check(locals())  # every parameter, before anything runs
    day = logical_date_for(flow_run.scheduled_start_time, logical_date)
    run_id = str(flow_run.id or f"local-{day}")
    project = shared_project()
    context = RunContext(
        run_id=run_id,
        command="daily",
        priority=locking.LIVE,
        is_backfill=False,
        selection=None,
        lock_wait_seconds=lock_wait_seconds,
        rows_model=project.catalog.primary.facts_model,
    )
    if logical_date is not None and not confirm:
        totals = restated_totals(project, context, day)
        if totals is not None:
            published = describe_day_totals(totals)
            logger.info("daily %s restates %s now published", day, published)
            raise RefillError(
                f"daily {day} restates a published day ({published} now published); "
                "review it and rerun with --yes to overwrite"
            )
    logger.info("daily run for logical date %s (run %s)", day, run_id)
    account = RunAccount(
        context,
        command_line,
        {"logical_date": day, "wait_for_ready_seconds": wait_for_ready_seconds},
        notification_name="daily",
        logical_date=day,
        code_version=combined_code_version(project.code_versions()),
        partitions=[day],
    )
    ending = RunEnding(
        interrupted_message=lambda stop: (
            f"daily {day}: {stop}; nothing written. Rerun `refill daily --date {day}`."
        ),
        resume_advice="",
        # the Prefect UI shows the week's board beside the run, whatever its outcome
        board_window=board.week_ending(day),
        board_key="refill-daily-board",
        board_on_every_outcome=True,
    )
    wait = ReadyWait(wait_for_ready_seconds, poll_seconds)
    retry = Retries.of(retries, retry_delay_seconds)
    with recorded_run(project, account, ending):
        verdict = wait_until_ready(day, wait, logger)
        if not verdict.is_ready:
            now = ops.utc_now()
            with_warehouse(
                context,
                lambda c: record_attempt(
                    c,
                    [day],
                    ops.Attempt(
                        run_id, "daily", day, day, 1, "not ready", verdict.reason, now, now
                    ),
                    FailedStep.READINESS,
                ),
            )
            raise RefillError(
                f"daily {day}: {unready_subject(project.catalog.names)} not ready "
                f"({verdict.reason}) after waiting "
                f"{wait_for_ready_seconds:g}s; nothing written. Rerun when the export lands.",
                failed_step=FailedStep.READINESS,
            )

        try:
            # a stop asked between attempts ends the wait; a build once started finishes whole
            with interrupts.interruptible(f"at {day}"):
                result = retry.builder()(project, context, Chunk(day, day))
        except interrupts.Interrupted:
            record_interrupted_attempt(context, Chunk(day, day))
            raise
        except ChunkFailed as failure:
            if not failure.recorded:
                account.failed_attempt = unrecorded_attempt(
                    context, Chunk(day, day), failure, retry.at_least_one
                )
            raise ChunkFailed(
                f"daily {day}: {failure}; {failure.what_to_do}",
                transient=failure.transient,
                failed_step=failure.failed_step,
                what_to_do=failure.what_to_do,
                recorded=failure.recorded,
            ) from None
        message = f"daily {day}: published {result.rows} rows of {context.rows_model}"
        logger.info(message)
        account.close("succeeded", message)
    return DailyReport(
        day, "succeeded", result.rows, time.monotonic() - clock, message, result.attempt
    )
