"""Backfills: an explicit range, cut into chunks, built newest- or oldest-first, resuming
only what is missing, failed or stale, and asking before restating published numbers.

The flow reads from window to chunk to dbt: the plan (refill/rules/plan.py) says which
days and chunks; `ChunkLoop` builds them one by one, each chunk one dbt invocation under
the warehouse lock (flows/tasks.py:build_window); `wait_for_late_days` builds the days of
`--on-missing wait` as they land. The run's life around them is flows/lifecycle.py.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from prefect import flow, get_run_logger
from prefect.runtime import flow_run

from flows.backfill_plan import PlannedBackfill, plan_backfill, refuse_unsigned_restatement
from flows.lifecycle import ReadyWait, Retries, RunEnding, recorded_run
from flows.preview import preview_path
from flows.scheduler import ParallelBuilds
from flows.signals import end_as_cancelled
from flows.tasks import (
    ChunkFailed,
    ChunkResult,
    RunAccount,
    RunContext,
    combined_code_version,
    record_interrupted_attempt,
    record_unrecorded_attempt,
    refusals_fail_the_run,
)
from refill import interrupts, options, settings
from refill.errors import FailedStep, RefillError
from refill.rules import planning, readiness
from refill.rules.catalog import chunk_rows_model
from refill.rules.plan import BackfillPlan, PlanOptions, late_chunks
from refill.rules.planning import Chunk
from refill.rules.preview import checked_sign_off
from refill.warehouse import locking, ops, run_liveness
from refill.warehouse.dbt_runner import DbtProject, shared_project
from refill.warehouse.engine import warehouse_at


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
    preview: object = None  # flows.preview.PreviewOutcome of --preview / --from-preview

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


def _progress(
    logger, report: BackfillReport, done: int, total: int, result: ChunkResult, running: str = ""
) -> None:
    width = 20
    filled = round(width * done / total) if total else width
    average = sum(report.chunk_seconds) / len(report.chunk_seconds)
    eta = average * (total - done)
    logger.info(
        "[%s%s] %d/%d chunks · %s · %d rows · %.1fs · ETA %.0fs%s",
        "#" * filled,
        "-" * (width - filled),
        done,
        total,
        result.chunk,
        result.rows,
        result.seconds,
        eta,
        running,
    )


@dataclass
class ChunkLoop:
    """Builds chunks one at a time, in the order given, into `report`: a chunk that fails
    is recorded and the others go on; a day still not ready stops the loop before its
    chunk (--on-missing fail); a stop asked by the user ends it at the next safe point."""

    project: DbtProject
    context: RunContext
    retry: Retries
    account: RunAccount
    report: BackfillReport
    total: int  # chunks the run expects to build, for the progress line
    done: int = 0
    stopped: bool = False  # a day was not ready: no further chunk is built
    # Several chunks at once (an engine with concurrent writers): flows/scheduler.py
    parallel: ParallelBuilds | None = None

    def build(self, chunks: Sequence[Chunk], *, recheck: Collection[date] = ()) -> None:
        """Build `chunks`; a day of `recheck` (not ready when planned) is checked again
        before its chunk, which is not built if the day still is not ready."""
        if self.parallel is not None:
            self.parallel.build(self, chunks, recheck)
            return
        builder = self.retry.builder()
        for chunk in chunks:
            if self.stopped or not self.may_start(chunk, recheck):
                return
            self._build_one(builder, chunk)

    def may_start(self, chunk: Chunk, recheck: Collection[date]) -> bool:
        """The checks before a chunk starts: a stop asked, a day still not ready."""
        interrupts.raise_if_requested(f"before chunk {chunk}")
        unready = [day for day in chunk.days if day in recheck and not _is_ready(day)]
        if unready:
            self.report.not_ready += unready
            get_run_logger().warning(
                "stopping before chunk %s: not ready %s (--on-missing fail)",
                chunk,
                ", ".join(map(str, unready)),
            )
            self.stopped = True
        return not self.stopped

    def build_late(self, chunks: Sequence[Chunk]) -> None:
        """Build the chunks of days that landed late; the progress line counts them too."""
        self.total = self.done + len(chunks)
        self.build(chunks)

    def _build_one(self, builder, chunk: Chunk) -> None:
        try:
            # a stop asked while this chunk waits (between attempts) ends the wait;
            # its build itself, once started, commits or rolls back whole
            with interrupts.interruptible(f"at chunk {chunk}"):
                result = builder(self.project, self.context, chunk)
        except interrupts.Interrupted:
            record_interrupted_attempt(self.context, chunk)
            raise
        except ChunkFailed as failure:
            self.failed(chunk, failure)
            return
        self.published(chunk, result)

    def failed(self, chunk: Chunk, failure: ChunkFailed) -> None:
        """Account for a chunk that failed; the others go on."""
        report = self.report
        if not failure.recorded:
            record_unrecorded_attempt(self.context, chunk, failure, self.retry.at_least_one)
        report.failed[str(chunk)] = str(failure)
        report.failures.append(failure)
        report.failed_days += chunk.days
        # The message itself is in the run's closing line; here, what happened.
        get_run_logger().warning(
            "chunk %s failed at %s; the other chunks go on", chunk, failure.failed_step
        )
        self.done += 1

    def published(self, chunk: Chunk, result: ChunkResult, running: str = "") -> None:
        """Account for a chunk that published; `running`: the chunks still building."""
        report = self.report
        self.done += 1
        report.published += chunk.days
        self.account.partitions += chunk.days
        report.rows += result.rows
        report.chunk_seconds.append(result.seconds)
        report.order_built.append(chunk)
        _progress(get_run_logger(), report, self.done, self.total, result, running)


def _not_ready(days: list[date]) -> str:
    """The days not ready, grouped by why, as readiness says it now."""
    datasets = shared_project().catalog.names
    by_reason: dict[str, list[str]] = {}
    for day in sorted(set(days)):
        verdict = readiness.datasets_day_readiness(settings.landing_root(), datasets, day)
        by_reason.setdefault(verdict.reason if not verdict.is_ready else "landed since", [])
        by_reason[verdict.reason if not verdict.is_ready else "landed since"].append(str(day))
    return "; ".join(f"{', '.join(shown)} ({reason})" for reason, shown in by_reason.items())


def _is_ready(day: date) -> bool:
    datasets = shared_project().catalog.names
    return readiness.datasets_day_readiness(settings.landing_root(), datasets, day).is_ready


@dataclass(frozen=True)
class LateDays:
    """What `wait_for_late_days` saw: the days that landed in time (built, in chunks),
    and those still not ready when the wait ended."""

    landed: list[date]
    still_not_ready: list[date]


def wait_for_late_days(
    pending: Sequence[date],
    wait: ReadyWait,
    options: PlanOptions,
    build: Callable[[list[Chunk]], object],
) -> LateDays:
    """--on-missing wait: the ready chunks ran first; now build late days as they land,
    checking every `wait.poll_seconds` until `wait.seconds` have passed."""
    logger = get_run_logger()
    deadline = wait.deadline()
    pending = list(pending)
    landed_in_time: list[date] = []
    while pending:
        datasets = shared_project().catalog.names
        verdicts = [
            readiness.datasets_day_readiness(settings.landing_root(), datasets, d) for d in pending
        ]
        landed = [verdict.day for verdict in verdicts if verdict.is_ready]
        if landed:
            lines = {verdict.day: verdict.manifest_records or 0 for verdict in verdicts}
            build(late_chunks(landed, lines, options))
            landed_in_time += landed
            pending = [day for day in pending if day not in landed]
            continue
        if time.monotonic() >= deadline:
            logger.error("still not ready after waiting: %s", ", ".join(map(str, pending)))
            break
        logger.info("waiting for late day(s) %s", ", ".join(map(str, pending)))
        wait.pause(deadline, "waiting for late days")
    return LateDays(landed_in_time, pending)


@flow(name="refill-backfill")
@refusals_fail_the_run
@end_as_cancelled
@run_liveness.released_at_end
def backfill(
    start: date,
    end: date,
    order: str = settings.BACKFILL_ORDER,
    chunk_days: int = settings.CHUNK_DAYS,
    chunk_lines: int = settings.CHUNK_LINES,
    max_concurrency: int = 1,
    restate: bool = False,
    confirm: bool | str = False,
    dry_run: bool = False,
    on_missing: str = settings.ON_MISSING,
    select: str | None = None,
    retries: int = settings.RETRIES,
    retry_delay_seconds: list[float] | None = None,
    wait_for_late_seconds: float = settings.READY_WAIT_SECONDS,
    poll_seconds: float = settings.READY_POLL_SECONDS,
    lock_wait_seconds: float = settings.BACKFILL_LOCK_WAIT_SECONDS,
    only_days: list[date] | None = None,
    command_line: str = "refill backfill (deployment)",
    preview: bool = False,
    expect_change: str | None = None,
    report_dir: str | None = None,
    planned: Any = None,  # a PlannedBackfill: given to the run as it is, never validated
) -> BackfillReport:
    """Rebuild a range of days in chunks. `start` and `end` are required (no default range).

    The parameters stay flat, as a deployment and the command line pass them; the body
    reads them in groups: the plan's options (order, chunk_days, chunk_lines, restate,
    on_missing, only_days), the retries (retries, retry_delay_seconds), the wait for late
    days (wait_for_late_seconds, poll_seconds), and the sign-offs (confirm, dry_run).

    A restatement preview (flows/preview.py): `preview` builds the plan's chunks and keeps
    them unpublished (with `expect_change`, `report_dir` for its report); `confirm` naming
    a preview id (`--from-preview ID` on the command line) publishes what it kept.

    `planned`: the command line's plan of these parameters (flows/backfill_plan.py), made
    while its server started; a deployment leaves it out and the flow plans the same way.
    """
    logger = get_run_logger()
    clock = time.monotonic()
    # every parameter, as a deployment or the command line gave it, before anything runs
    options.check(locals())
    # a preview id reaches SQL as part of relation names: refused here, before planning
    confirm = checked_sign_off(confirm, preview)
    window = planning.parse_range(start, end)
    options.check_days_in_window(only_days, window)
    plan_options = PlanOptions(
        chunk_days=chunk_days,
        chunk_lines=chunk_lines,
        order=order,
        restate=restate,
        on_missing=on_missing,
        only_days=tuple(only_days) if only_days is not None else None,
    )
    project = shared_project()
    store = warehouse_at()
    concurrency, note = planning.effective_concurrency(
        max_concurrency, store.concurrent_writers, store.name
    )
    if note:
        logger.warning(note)

    if planned is None:
        planned = plan_backfill(project, window, select, plan_options)
    elif not isinstance(planned, PlannedBackfill) or not planned.asked(
        window, plan_options, select or None
    ):
        raise RefillError(
            f"the plan handed to the backfill ({str(getattr(planned, 'window', planned))[:60]}) "
            f"is not the plan of its parameters ({window}); leave `planned` out: the run plans"
        )
    plan, selection = planned.plan, planned.selection
    for line in plan.describe():
        logger.info(line)
    report = BackfillReport(plan)
    if dry_run:
        logger.info("dry run: nothing written")
        return report
    if preview or isinstance(confirm, str):
        return preview_path(
            project,
            planned,
            report,
            confirm=confirm,
            command_line=command_line,
            lock_wait_seconds=lock_wait_seconds,
            expect_change=expect_change,
            report_dir=report_dir,
        )
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
        selection=selection,
        lock_wait_seconds=lock_wait_seconds,
        rows_model=chunk_rows_model(project.catalog, selection.models),
    )
    parameters = {
        **planned.parameters(),
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
        code_version=combined_code_version(planned.code_versions),
    )

    def interrupted(stop: interrupts.Interrupted) -> str:
        report.seconds = time.monotonic() - clock
        account.partitions = list(report.published)
        return f"backfill {window}: {stop}; {report.summary()}"

    ending = RunEnding(
        interrupted_message=interrupted,
        resume_advice="Rerun the same command to resume: published days are skipped.",
        board_window=window,
        board_key="refill-backfill-board",
        board_on_every_outcome=False,
    )
    parallel = contextlib.nullcontext()
    if concurrency > 1:
        first_alone = not set(selection.models) <= ops.published_models(store)
        if first_alone:
            logger.info("the first chunk builds alone: it creates the models' tables")
        parallel = ParallelBuilds(concurrency, first_alone=first_alone)
    with recorded_run(project, account, ending), parallel as builds:
        chunks = ChunkLoop(
            project,
            context,
            Retries.of(retries, retry_delay_seconds),
            account,
            report,
            total=len(plan.chunks),
            parallel=builds,
        )
        chunks.build(plan.chunks, recheck=plan.unready_in_chunks)
        if not chunks.stopped and plan.deferred:
            late = wait_for_late_days(
                plan.deferred,
                ReadyWait(wait_for_late_seconds, poll_seconds),
                plan_options,
                build=chunks.build_late,
            )
            report.not_ready += late.still_not_ready
        if on_missing == "skip" and plan.not_ready:
            report.skipped_not_ready = list(plan.not_ready)
            logger.warning("skipped, not ready: %s", ", ".join(map(str, plan.not_ready)))

        report.seconds = time.monotonic() - clock
        message = f"backfill {window}: {report.summary()}"
        if not report.success:
            raise _backfill_failed(message, report)
        account.close("succeeded", message)
    logger.info(message)
    return report


def _backfill_failed(message: str, report: BackfillReport) -> RefillError:
    """The run's one line: what failed, why, and what to do. "Rerun the same command to
    resume" only where a rerun can help now: a transient failure. A day not ready is named
    with the reason; a rerun builds it once it has landed, and meanwhile builds nothing."""
    failures = report.failures
    detail = "; ".join(str(failure) for failure in failures)
    if report.not_ready:
        detail = "; ".join(filter(None, [detail, "not ready: " + _not_ready(report.not_ready)]))
    unready = ""
    if report.not_ready:
        unready = "the same command builds the days not ready once they have landed"
        built_or_not = {*report.published, *report.failed_days, *report.not_ready}
        waiting = [d for chunk in report.plan.chunks for d in chunk.days if d not in built_or_not]
        unready = (
            f"{len(waiting)} ready day(s) were not built after the stop: --on-missing skip "
            f"builds them now; {unready}"
            if waiting
            else f"nothing else can be built now; {unready}"
        )
    if failures and not all(failure.transient for failure in failures):
        advice = "; ".join(filter(None, [failures[0].what_to_do, unready]))
        if any(failure.transient for failure in failures):
            advice += "; rerun the same command for the other days"
    elif failures:
        advice = "; ".join(filter(None, ["rerun the same command to resume", unready]))
    else:
        advice = unready
    step = failures[0].failed_step if failures else FailedStep.READINESS
    return RefillError(
        f"{message}. {detail}. {advice[:1].upper()}{advice[1:]}.",
        transient=bool(failures) and all(failure.transient for failure in failures),
        failed_step=step,
    )
