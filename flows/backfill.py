"""Backfills: an explicit range, cut into chunks, built newest- or oldest-first, resuming
only what is missing, failed or stale, and asking before restating published numbers."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import date

from prefect import flow, get_run_logger
from prefect.runtime import flow_run

from flows.tasks import (
    ChunkFailed,
    ChunkResult,
    RunAccount,
    RunContext,
    accounted_run,
    build_window,
    combined_code_version,
    prepare_warehouse,
    publish_board,
    record_interrupted_attempt,
    record_unrecorded_attempt,
    refusals_fail_the_run,
)
from refill import interrupts, settings
from refill.errors import FailedStep, RefillError
from refill.rules import planning, readiness
from refill.rules.planning import Chunk, DayState
from refill.sample_data import DATASET
from refill.warehouse import locking, ops, partition_status, run_liveness
from refill.warehouse.dbt_runner import shared_project

# A chunk is one dbt invocation. It closes at DEFAULT_CHUNK_LINES landed lines (memory
# follows lines, not days: a chunk of 500,000 lines peaks near 0.55 GiB) or at
# DEFAULT_CHUNK_DAYS days, whichever comes first. Each chunk pays about a second of work
# that does not depend on its size (a dbt invocation, four models' audits and ledger
# rows, ~25 window-scoped tests, a checkpoint): at 500,000 lines (46 days at 10,000
# payments a day) that keeps a 30-day range's cost per day within 30% of a year's with
# room to spare (measured +18%; 600,000 lines measured +29% and no faster within noise).
# Measured in docs/performance.md.
DEFAULT_CHUNK_DAYS = 92
DEFAULT_CHUNK_LINES = 500_000
DEPLOYMENT_RETRY_DELAYS = [300, 600]


@dataclass
class BackfillPlan:
    window: planning.DateRange
    models: list[str]
    states: dict[date, DayState]
    chunks: list[Chunk]
    not_ready: list[date]
    deferred: list[date]  # not ready now, retried after the ready chunks (--on-missing wait)
    restated: dict[date, tuple[int, float]]  # published days the plan overwrites: rows, usd
    skipped: list[date]  # published with the current code and source

    def describe(self) -> list[str]:
        days = sum(len(chunk.days) for chunk in self.chunks)
        lines = [
            f"backfill {self.window} over {', '.join(self.models)}: "
            f"{days} day(s) to build in {len(self.chunks)} chunk(s), "
            f"{len(self.skipped)} already published, {len(self.not_ready)} not ready"
        ]
        lines += [f"  chunk {n}: {chunk}" for n, chunk in enumerate(self.chunks, 1)]
        if self.restated:
            lines.append(f"  restates {len(self.restated)} published day(s):")
            lines += [
                f"    {day}  {rows} payments  {usd:,.2f} USD now published"
                for day, (rows, usd) in sorted(self.restated.items())
            ]
        if self.not_ready:
            lines.append("  not ready: " + ", ".join(str(day) for day in self.not_ready))
        return lines


@dataclass
class BackfillReport:
    plan: BackfillPlan
    published: list[date] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # chunk -> message
    failures: list[ChunkFailed] = field(default_factory=list)
    failed_days: list[date] = field(default_factory=list)
    not_ready: list[date] = field(default_factory=list)  # stopped the run, or never landed
    skipped_not_ready: list[date] = field(default_factory=list)  # --on-missing skip
    rows: int = 0
    seconds: float = 0.0
    chunk_seconds: list[float] = field(default_factory=list)
    order_built: list[Chunk] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return not self.failed and not self.not_ready

    def summary(self) -> str:
        return (
            f"published {len(self.published)} day(s), skipped {len(self.plan.skipped)}, "
            f"failed {len(self.failed_days)}, "
            f"not ready {len(self.not_ready) + len(self.skipped_not_ready)}; "
            f"{self.rows} rows in {self.seconds:.1f}s"
        )


def make_plan(
    window: planning.DateRange,
    models: list[str],
    statuses: list[partition_status.DayStatus],
    *,
    chunk_days: int,
    chunk_lines: int = 0,
    order: str,
    restate: bool,
    on_missing: str,
    only_days: list[date] | None,
    published_totals: dict[date, tuple[int, float]],
) -> BackfillPlan:
    states = {status.day: status.state for status in statuses}
    if only_days is not None:
        wanted = {day for day in only_days if day in states}
        states = {day: state for day, state in states.items() if day in wanted}
        restate = True
    to_build = planning.days_to_build(states, restate)
    not_ready = sorted(day for day, state in states.items() if state == DayState.NOT_READY)
    deferred: list[date] = []
    if on_missing == "fail":
        # An unready day stays in the plan: the run stops before its chunk.
        to_build = sorted(set(to_build) | set(not_ready))
    elif on_missing == "wait":
        deferred = not_ready
    landed_lines = {status.day: status.readiness.manifest_records or 0 for status in statuses}
    chunks = planning.plan_chunks(
        to_build, chunk_days, order, lines=landed_lines, chunk_lines=chunk_lines
    )
    # Restating = changing numbers readers have seen: stale days, and current ones rebuilt
    # on purpose. A missing or failed day rebuilds to the numbers already published, if any.
    restated = {
        day: published_totals.get(day, (0, 0.0))
        for day in to_build
        if states.get(day) in (DayState.STALE, DayState.PUBLISHED)
    }
    skipped = sorted(
        day for day, state in states.items() if state == DayState.PUBLISHED and not restate
    )
    return BackfillPlan(window, models, states, chunks, not_ready, deferred, restated, skipped)


def plan_backfill(
    project,
    window: planning.DateRange,
    select: str | None,
    *,
    chunk_days: int,
    chunk_lines: int,
    order: str,
    restate: bool,
    on_missing: str,
    only_days: list[date] | None = None,
):
    """The selection, the current code versions and the plan of a backfill: read-only, no
    Prefect (the command line plans once before its server is up, to refuse early)."""
    selection = project.resolve_selection(select)
    current_versions = project.code_versions()
    warehouse = settings.warehouse_path()
    statuses = partition_status.collect(
        warehouse, settings.landing_root(), window, selection.models, current_versions
    )
    totals: dict[date, tuple[int, float]] = {}
    if any(status.ledger for status in statuses):
        totals = ops.published_totals(warehouse, window.start, window.end)
    plan = make_plan(
        window,
        selection.models,
        statuses,
        chunk_days=chunk_days,
        chunk_lines=chunk_lines,
        order=order,
        restate=restate,
        on_missing=on_missing,
        only_days=only_days,
        published_totals=totals,
    )
    return selection, current_versions, plan


def refuse_unsigned_restatement(plan: BackfillPlan) -> None:
    """A plan that changes published numbers needs the --yes sign-off (confirm)."""
    if plan.restated:
        days = ", ".join(str(day) for day in sorted(plan.restated))
        raise RefillError(
            f"the plan restates {len(plan.restated)} published day(s) ({days}); "
            "review them above and rerun with --yes to overwrite, or narrow the range"
        )


def _progress(logger, report: BackfillReport, done: int, total: int, result: ChunkResult) -> None:
    width = 20
    filled = round(width * done / total) if total else width
    average = sum(report.chunk_seconds) / len(report.chunk_seconds)
    eta = average * (total - done)
    logger.info(
        "[%s%s] %d/%d chunks · %s · %d rows · %.1fs · ETA %.0fs",
        "#" * filled,
        "-" * (width - filled),
        done,
        total,
        result.chunk,
        result.rows,
        result.seconds,
        eta,
    )


@flow(name="refill-backfill")
@refusals_fail_the_run
@interrupts.end_as_cancelled
@run_liveness.released_at_end
def backfill(
    start: date,
    end: date,
    order: str = "newest-first",
    chunk_days: int = DEFAULT_CHUNK_DAYS,
    chunk_lines: int = DEFAULT_CHUNK_LINES,
    max_concurrency: int = 1,
    restate: bool = False,
    confirm: bool = False,
    dry_run: bool = False,
    on_missing: str = "fail",
    select: str | None = None,
    retries: int = 3,
    retry_delay_seconds: list[float] | None = None,
    wait_for_late_seconds: float = 3 * 3600,
    poll_seconds: float = 300,
    lock_wait_seconds: float = 3600,
    only_days: list[date] | None = None,
    command_line: str = "refill backfill (deployment)",
) -> BackfillReport:
    """Rebuild a range of days in chunks. `start` and `end` are required (no default range)."""
    logger = get_run_logger()
    clock = time.monotonic()
    planning.validate_options(order, chunk_days, max_concurrency, on_missing, chunk_lines)
    window = planning.parse_range(start, end)
    project = shared_project()
    concurrency, note = planning.effective_concurrency(max_concurrency, project.adapter_type)
    if note:
        logger.warning(note)

    selection, current_versions, plan = plan_backfill(
        project,
        window,
        select,
        chunk_days=chunk_days,
        chunk_lines=chunk_lines,
        order=order,
        restate=restate,
        on_missing=on_missing,
        only_days=only_days,
    )
    for line in plan.describe():
        logger.info(line)
    report = BackfillReport(plan)
    if dry_run:
        logger.info("dry run: nothing written")
        return report
    if not confirm:
        refuse_unsigned_restatement(plan)
    if not plan.chunks and not plan.deferred:
        logger.info("nothing to do: every day in %s is published and current", window)
        report.seconds = time.monotonic() - clock
        return report

    run_id = str(flow_run.id or "local-backfill")
    context = RunContext(
        run_id=run_id,
        command="backfill",
        priority=locking.HISTORY,
        is_backfill=True,
        select=selection.select,
        lock_wait_seconds=lock_wait_seconds,
        rows_model="fct_payments"
        if "fct_payments" in selection.models or not selection.models
        else selection.models[0],
    )
    parameters = {
        "start": window.start,
        "end": window.end,
        "order": order,
        "chunk_days": chunk_days,
        "chunk_lines": chunk_lines,
        "restate": restate,
        "on_missing": on_missing,
        "select": select,
        # what was asked, and what runs: on DuckDB one chunk at a time (see the note)
        "max_concurrency": max_concurrency,
        "effective_concurrency": concurrency,
    }
    account = RunAccount(
        context,
        command_line,
        parameters,
        notification_name=f"backfill {window}",
        logical_date=None,
        code_version=combined_code_version(current_versions),
    )
    delays = retry_delay_seconds if retry_delay_seconds is not None else DEPLOYMENT_RETRY_DELAYS
    builder = build_window.with_options(retries=max(retries - 1, 0), retry_delay_seconds=delays)

    def run_chunks(chunks: list[Chunk], total: int, done: int) -> int:
        for chunk in chunks:
            interrupts.raise_if_requested(f"before chunk {chunk}")
            unready = [day for day in chunk.days if plan.states.get(day) == DayState.NOT_READY]
            unready = [
                day
                for day in unready
                if not readiness.day_readiness(settings.landing_root(), DATASET, day).is_ready
            ]
            if unready:
                report.not_ready += unready
                logger.warning(
                    "stopping before chunk %s: not ready %s (--on-missing fail)",
                    chunk,
                    ", ".join(map(str, unready)),
                )
                return -1
            try:
                # a stop asked while this chunk waits (between attempts) ends the wait;
                # its build itself, once started, commits or rolls back whole
                with interrupts.interruptible(f"at chunk {chunk}"):
                    result = builder(project, context, chunk)
            except interrupts.Interrupted:
                record_interrupted_attempt(context, chunk)
                raise
            except ChunkFailed as failure:
                if not failure.recorded:
                    record_unrecorded_attempt(context, chunk, failure, max(retries, 1))
                report.failed[str(chunk)] = str(failure)
                report.failures.append(failure)
                report.failed_days += chunk.days
                # The message itself is in the run's closing line; here, what happened.
                logger.warning(
                    "chunk %s failed at %s; the other chunks go on", chunk, failure.failed_step
                )
                done += 1
                continue
            done += 1
            report.published += chunk.days
            account.partitions += chunk.days
            report.rows += result.rows
            report.chunk_seconds.append(result.seconds)
            report.order_built.append(chunk)
            _progress(logger, report, done, total, result)
        return done

    with accounted_run(account):
        prepare_warehouse(project, context)
        run_liveness.hold(settings.warehouse_path(), run_id)  # before the run log says `running`
        account.start()
        total = len(plan.chunks)
        try:
            done = run_chunks(plan.chunks, total, 0)
            if done >= 0 and plan.deferred:
                done = _wait_for_late_days(
                    plan,
                    report,
                    run_chunks,
                    wait_for_late_seconds,
                    poll_seconds,
                    chunk_days,
                    chunk_lines,
                    logger,
                    done,
                )
        except interrupts.Interrupted as stop:
            raise _close_interrupted(account, report, window, stop, clock) from None
        if on_missing == "skip" and plan.not_ready:
            report.skipped_not_ready = list(plan.not_ready)
            logger.warning("skipped, not ready: %s", ", ".join(map(str, plan.not_ready)))

        report.seconds = time.monotonic() - clock
        message = f"backfill {window}: {report.summary()}"
        if not report.success:
            raise _backfill_failed(message, report)
        account.close("succeeded", message)
    publish_board(window, key="refill-backfill-board")
    logger.info(message)
    return report


def _backfill_failed(message: str, report: BackfillReport) -> RefillError:
    """The run's one line: what failed, and what to do. "Rerun the same command to resume"
    only where a rerun can help: a transient failure, or days that were not ready yet."""
    failures = report.failures
    detail = "; ".join(str(failure) for failure in failures)
    if report.not_ready:
        detail = "; ".join(
            filter(None, [detail, "not ready: " + ", ".join(map(str, report.not_ready))])
        )
    if failures and not all(failure.transient for failure in failures):
        advice = failures[0].what_to_do
        if report.not_ready or any(failure.transient for failure in failures):
            advice += "; rerun the same command for the other days"
    else:
        advice = "rerun the same command to resume"
    step = failures[0].failed_step if failures else FailedStep.READINESS
    return RefillError(
        f"{message}. {detail}. {advice[:1].upper()}{advice[1:]}.",
        transient=bool(failures) and all(failure.transient for failure in failures),
        failed_step=step,
    )


def _wait_for_late_days(
    plan, report, run_chunks, wait_seconds, poll_seconds, chunk_days, chunk_lines, logger, done
) -> int:
    """--on-missing wait: the ready chunks ran first; now build late days as they land."""
    deadline = time.monotonic() + wait_seconds
    pending = list(plan.deferred)
    while pending:
        verdicts = [readiness.day_readiness(settings.landing_root(), DATASET, d) for d in pending]
        landed = [verdict.day for verdict in verdicts if verdict.is_ready]
        if landed:
            for day in landed:
                plan.states[day] = DayState.MISSING
            lines = {verdict.day: verdict.manifest_records or 0 for verdict in verdicts}
            chunks = planning.plan_chunks(
                landed, chunk_days, "newest-first", lines=lines, chunk_lines=chunk_lines
            )
            done = run_chunks(chunks, done + len(chunks), done)
            pending = [day for day in pending if day not in landed]
            continue
        if time.monotonic() >= deadline:
            report.not_ready += pending
            logger.error("still not ready after waiting: %s", ", ".join(map(str, pending)))
            break
        logger.info("waiting for late day(s) %s", ", ".join(map(str, pending)))
        with interrupts.interruptible("waiting for late days"):
            time.sleep(min(poll_seconds, max(deadline - time.monotonic(), 0.0)))
    return done


def _close_interrupted(
    account: RunAccount,
    report: BackfillReport,
    window,
    stop: interrupts.Interrupted,
    clock: float,
) -> interrupts.Interrupted:
    """Close the run log as interrupted; what the chunks before the stop published stands."""
    report.seconds = time.monotonic() - clock
    message = f"backfill {window}: {stop}; {report.summary()}"
    get_run_logger().warning(message)
    account.partitions = list(report.published)
    account.close("interrupted", message, failure="interrupted")
    return interrupts.Interrupted(
        f"{message}. Rerun the same command to resume: published days are skipped."
    )
