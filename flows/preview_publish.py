"""Publishing a restatement preview (`refill backfill --restate --yes --from-preview ID`, or
the backfill deployment's `confirm: <id>`): what the preview kept, chunk by chunk, through
the same publish SQL as a build (macros/wap/refill_publish_preview.sql: one transaction per
chunk, ledger rows included), without running the models again.

Whether it may be published is refill.rules.preview.what_changed, asked twice: here, once,
before the run starts (a refusal in one line, nothing begun), and by the publish operation
itself for each chunk, at the moment it writes, under the warehouse lock (a re-export or a
daily run while this run waited is refused there). Each chunk's publish marks it published
from the preview in its own transaction, so a publish stopped between chunks (Ctrl-C, a
failure, a kill) resumes with the same command: the chunks it published are skipped. The run
log row of the publishing run names the preview it approved (parameters.from_preview) and
the models it publishes (parameters.select: the preview's).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import date

from prefect import get_run_logger
from prefect.runtime import flow_run

from flows.lifecycle import RunEnding, recorded_run
from flows.tasks import RunAccount, RunContext, combined_code_version, record_attempt
from refill import interrupts, settings
from refill.errors import FailedStep, RefillError
from refill.rules import planning
from refill.rules import preview as rules
from refill.rules.cutover import day_ranges
from refill.rules.window import window_vars
from refill.warehouse import locking, ops, preview_store
from refill.warehouse.dbt_runner import DbtProject, Selection


@dataclass
class PreviewOutcome:
    preview_id: str
    text: str  # the printed report
    saved: list[str]  # the report's files
    published_days: list[date]
    seconds: float


def preview_context(
    run_id: str, command: str, selection: Selection | None, lock_wait: float
) -> RunContext:
    return RunContext(
        run_id=run_id,
        command=command,
        priority=locking.HISTORY,
        is_backfill=True,
        selection=selection,
        lock_wait_seconds=lock_wait,
    )


def publish_from_preview(
    project: DbtProject,
    preview_id: str,
    window: planning.DateRange,
    selection: Selection,
    parameters: dict,
    *,
    command_line: str,
    lock_wait_seconds: float,
) -> PreviewOutcome:
    """Publish the chunks preview `preview_id` kept (those not published yet), or refuse in
    one line naming what changed since (the preview is dropped when expired, and once
    published)."""
    logger = get_run_logger()
    clock = time.monotonic()
    preview_id = rules.checked_preview_id(preview_id)
    run_id = str(flow_run.id or f"local-publish-{preview_id}")
    context = preview_context(run_id, "backfill", None, lock_wait_seconds)
    record = _refuse_before_the_run(project, preview_id, window, selection, context)

    published: list[date] = []
    account = RunAccount(
        context,
        command_line,
        {**parameters, "select": record.models, "from_preview": preview_id},
        notification_name=f"backfill {window}",
        logical_date=None,
        code_version=combined_code_version(project.code_versions()),
    )

    def interrupted(stop: interrupts.Interrupted) -> str:
        account.partitions = list(published)
        return f"publishing preview {preview_id}: {stop}; published {len(published)} day(s)"

    ending = RunEnding(
        interrupted_message=interrupted,
        resume_advice="Rerun the same command to publish the rest of the preview.",
        board_window=window,
        board_key="refill-backfill-board",
        board_on_every_outcome=False,
    )
    warehouse = settings.warehouse_path()
    with recorded_run(project, account, ending):
        for start, end in record.remaining_chunks:
            chunk = planning.Chunk(start, end)
            interrupts.raise_if_requested(f"before chunk {chunk}")
            with context.lock(chunk.days):
                # the last safe point: a stop asked while it waited publishes nothing more
                interrupts.raise_if_requested(f"before chunk {chunk}")
                logger.info("preview %s: chunk %s: publishing", preview_id, chunk)
                outcome = _publish_chunk(project, context, preview_id, chunk)
            if not outcome.success:
                kept = [
                    day for s, e in record.remaining_chunks for day in planning.Chunk(s, e).days
                ]
                left = [day for day in kept if day not in published]
                # the advice's "nothing was published" is the chunk's: the line says it exactly
                advice = outcome.what_to_do
                for said in ("nothing was published; ", "nothing was written; "):
                    advice = advice.removeprefix(said)
                raise RefillError(
                    f"publishing preview {preview_id}: chunk {chunk} failed at "
                    f"{outcome.failed_step}: {outcome.message}. Published by this run: "
                    + (f"{len(published)} day(s) ({_days(published)})" if published else "none")
                    + f"; not published: {len(left)} day(s) ({_days(left)}), as they were. "
                    f"{advice[:1].upper()}{advice[1:]}",
                    transient=outcome.transient,
                    failed_step=outcome.failed_step or FailedStep.PUBLISH,
                )
            published += chunk.days
            account.partitions = list(published)
            logger.info("preview %s: chunk %s published", preview_id, chunk)
        with context.lock(), ops.connect(warehouse) as connection:
            preview_store.drop_preview(connection, preview_id)
        message = f"backfill {window}: published {len(published)} day(s) from preview {preview_id}"
        account.close("succeeded", message)
    return PreviewOutcome(preview_id, message, [], published, time.monotonic() - clock)


def _days(days: list[date]) -> str:
    ranges = day_ranges(days)
    return ", ".join(f"{first}..{last}" if last != first else str(first) for first, last in ranges)


def _refuse_before_the_run(
    project: DbtProject,
    preview_id: str,
    window: planning.DateRange,
    selection: Selection,
    context: RunContext,
) -> rules.PreviewRecord:
    """The preview's record, or a refusal in one line before the run starts: no such
    preview, another window, another selection, or something it depends on changed."""
    warehouse = settings.warehouse_path()
    record = None
    if warehouse.exists():
        with ops.connect(warehouse, read_only=True) as connection:
            record = preview_store.read_record(connection, preview_id)
    if record is None:
        raise RefillError(
            f"no preview {preview_id} in this warehouse (published, expired or never made); "
            "run the backfill with --preview again"
        )
    if (record.start, record.end) != (window.start, window.end):
        raise RefillError(
            f"preview {preview_id} covers {record.start}..{record.end}, not {window}; "
            f"run with --start {record.start} --end {record.end}"
        )
    refused = rules.selection_refused(record, selection.given, selection.models)
    if refused is not None:
        raise RefillError(f"--from-preview refused: {refused}")
    reason = _what_changed(project, record)
    if reason is not None:
        if ops.utc_now() >= record.expires_at:  # expired (what_changed checks it first)
            with context.lock(), ops.connect(warehouse) as connection:
                preview_store.drop_preview(connection, preview_id)
            reason += "; it is dropped"
        raise RefillError(f"--from-preview refused: {reason}; run the preview again")
    return record


def _publish_chunk(project: DbtProject, context: RunContext, preview_id: str, chunk):
    """One chunk's publish operation (it checks the preview again, then writes), and its
    attempt row: the operation's own error when it failed."""
    started = ops.utc_now()
    outcome = project.run_operation(
        "refill_publish_preview",
        {"preview_id": preview_id},
        window_vars(chunk.start, chunk.end, context.run_id, is_backfill=True),
    )
    attempt = ops.Attempt(
        context.run_id,
        context.command,
        chunk.start,
        chunk.end,
        1,
        "published" if outcome.success else "failed",
        outcome.message,
        started,
        ops.utc_now(),
    )
    with ops.connect(settings.warehouse_path()) as connection:
        record_attempt(connection, chunk.days, attempt, outcome.failed_step)
    return outcome


def _what_changed(project: DbtProject, record: rules.PreviewRecord) -> str | None:
    with ops.connect(settings.warehouse_path(), read_only=True) as connection:
        published = preview_store.read_published_state(
            connection, record.models, record.start, record.end
        )
    datasets = record.datasets or list(project.catalog.names)
    return rules.what_changed(
        record,
        now=ops.utc_now(),
        code_versions=project.code_versions(),
        current_fingerprints=preview_store.current_fingerprints(datasets, record.remaining_chunks),
        published=published,
        current_references=project.catalog.reference_fingerprints(record.start, record.end),
    )
