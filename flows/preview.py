"""A restatement preview, and publishing one: the two paths of the backfill flow that
`--preview` and `--from-preview ID` take (flows/backfill.py hands over to them once it
has planned).

`run_preview` builds every chunk of the plan exactly as a real run does (the same dbt
build, audits and window tests) with the var `refill_preview_id`: on-run-end keeps the
chunk under the preview's id (schema `preview`) instead of publishing it, so nothing
consumers read changes. It then records the preview (ops.refill_previews: the plan, the
code versions and source fingerprints the chunks were computed from, the published state
of each day) and reports old vs new.

`publish_from_preview` publishes what a preview kept, chunk by chunk, through the same
publish SQL (macros/wap/refill_publish_preview.sql: one transaction per chunk, ledger rows
included), without running the models again, iff nothing it depends on changed
(refill.rules.preview.what_changed); the run log row of the publishing run names the
preview it approved (parameters.from_preview).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import date, timedelta

from prefect import get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.runtime import flow_run

from flows.lifecycle import RunEnding, recorded_run
from flows.tasks import RunAccount, RunContext, combined_code_version, record_attempt
from refill import settings
from refill.errors import FailedStep, RefillError
from refill.rules import planning, readiness
from refill.rules import preview as rules
from refill.rules.plan import BackfillPlan
from refill.views import preview_report
from refill.warehouse import locking, ops, preview_store
from refill.warehouse.dbt_runner import DbtProject, window_vars
from refill.warehouse.engine import require_transactions, warehouse_at


@dataclass
class PreviewOutcome:
    preview_id: str
    text: str  # the printed report
    saved: list[str]  # the report's files
    published_days: list[date]
    seconds: float


def _context(run_id: str, command: str, select: str | None, lock_wait: float) -> RunContext:
    return RunContext(
        run_id=run_id,
        command=command,
        priority=locking.HISTORY,
        is_backfill=True,
        select=select,
        lock_wait_seconds=lock_wait,
    )


def _locked(context: RunContext, days: list[date] | None = None):
    return warehouse_at().lock(
        run_id=context.run_id,
        command=context.command,
        priority=context.priority,
        partitions=days,
        wait_seconds=context.lock_wait_seconds,
    )


def run_preview(
    project: DbtProject,
    plan: BackfillPlan,
    selection,
    parameters: dict,
    *,
    expect_change: str | None,
    report_dir: str | None,
    command_line: str,
    lock_wait_seconds: float,
) -> PreviewOutcome:
    logger = get_run_logger()
    clock = time.monotonic()
    expected = rules.parse_expected_range(expect_change)
    preview_id = rules.new_preview_id()
    run_id = str(flow_run.id or f"local-preview-{preview_id}")
    context = _context(run_id, "backfill --preview", selection.select, lock_wait_seconds)
    window = plan.window
    account = RunAccount(
        context,
        command_line,
        {**parameters, "preview": preview_id},
        # its own notification key: a later real run of the window must still notify
        notification_name=f"backfill preview {preview_id} {window}",
        logical_date=None,
        code_version=combined_code_version(project.code_versions()),
    )
    ending = RunEnding(
        interrupted_message=lambda stop: f"preview {preview_id} of {window}: {stop}",
        resume_advice="Nothing was published; run the preview again.",
        board_window=window,
        board_key="refill-preview-board",
        board_on_every_outcome=False,
    )
    with recorded_run(project, account, ending):
        try:
            for chunk in plan.chunks:
                variables = window_vars(chunk.start, chunk.end, run_id, is_backfill=True)
                variables["refill_preview_id"] = preview_id
                with _locked(context, chunk.days):
                    logger.info("preview %s: chunk %s, kept", preview_id, chunk)
                    outcome = project.build(variables, select=selection.select, include_seeds=False)
                if not outcome.success:
                    raise RefillError(
                        f"preview {preview_id}: chunk {chunk} failed at {outcome.failed_step}: "
                        f"{outcome.message}; nothing published, the preview is dropped",
                        failed_step=outcome.failed_step or FailedStep.OTHER,
                    )
            with _locked(context), ops.connect(settings.warehouse_path()) as connection:
                report = preview_store.report(
                    connection, project.catalog, preview_id, window.start, window.end
                )
                report.expected = expected
                record = _record(connection, preview_id, run_id, plan, selection)
                preview_store.save_record(connection, record, report.as_json())
                for old in preview_store.expired_previews(connection, ops.utc_now()):
                    preview_store.drop_preview(connection, old)
                    logger.info("preview %s expired: dropped", old)
        except BaseException:
            with _locked(context), ops.connect(settings.warehouse_path()) as connection:
                preview_store.drop_preview(connection, preview_id)
            raise
        text = preview_report.render(report, record)
        saved = preview_report.save(report, record, _report_folder(report_dir, preview_id))
        _publish_artifact(report, record)
        message = (
            f"preview {preview_id} of {window}: {len(report.days_changed)} day(s) change, "
            f"{len(report.days_unchanged)} unchanged; nothing published"
        )
        account.close("succeeded", message)
    return PreviewOutcome(preview_id, text, saved, [], time.monotonic() - clock)


def _record(connection, preview_id, run_id, plan: BackfillPlan, selection) -> rules.PreviewRecord:
    kept = preview_store.read_kept_ledger(connection, preview_id)
    models = sorted({model for model, *_ in kept})
    created = ops.utc_now()
    return rules.PreviewRecord(
        preview_id=preview_id,
        run_id=run_id,
        created_at=created,
        expires_at=created + timedelta(days=settings.PREVIEW_KEEP_DAYS),
        start=plan.window.start,
        end=plan.window.end,
        models=models,
        chunks=[(chunk.start, chunk.end) for chunk in plan.chunks],
        code_versions={model: code for model, _, code, *_ in kept},
        fingerprints={rules.state_key(m, day): fp for m, day, _, fp, *_ in kept if fp},
        references={rules.state_key(m, day): ref for m, day, *_, ref in kept if ref is not None},
        published=preview_store.read_published_state(
            connection, models, plan.window.start, plan.window.end
        ),
        select=selection.select,
    )


def _report_folder(report_dir: str | None, preview_id: str):
    return settings.preview_report_dir(report_dir) / preview_id


def _publish_artifact(report: rules.PreviewReport, record: rules.PreviewRecord) -> None:
    """The report beside the run in the Prefect UI; never fails the run."""
    try:
        create_markdown_artifact(
            markdown=preview_report.markdown(report, record),
            key="refill-preview",
            description=f"refill restatement preview {record.preview_id}",
        )
    except Exception as error:  # the picture of a run is not worth failing it
        get_run_logger().warning("the preview artifact was not published: %s", error)


def publish_from_preview(
    project: DbtProject,
    preview_id: str,
    window: planning.DateRange,
    parameters: dict,
    *,
    command_line: str,
    lock_wait_seconds: float,
) -> PreviewOutcome:
    """Publish the chunks preview `preview_id` kept, or refuse in one line naming what
    changed since (the preview is dropped when expired, and once published)."""
    logger = get_run_logger()
    clock = time.monotonic()
    preview_id = rules.checked_preview_id(preview_id)
    run_id = str(flow_run.id or f"local-publish-{preview_id}")
    context = _context(run_id, "backfill", None, lock_wait_seconds)
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
    reason = _what_changed(project, record)
    if reason is not None:
        if ops.utc_now() >= record.expires_at:  # expired (what_changed checks it first)
            with _locked(context), ops.connect(warehouse) as connection:
                preview_store.drop_preview(connection, preview_id)
            reason += "; it is dropped"
        raise RefillError(f"--from-preview refused: {reason}; run the preview again")

    account = RunAccount(
        context,
        command_line,
        {**parameters, "from_preview": preview_id},
        notification_name=f"backfill {window}",
        logical_date=None,
        code_version=combined_code_version(project.code_versions()),
    )
    ending = RunEnding(
        interrupted_message=lambda stop: f"publishing preview {preview_id}: {stop}",
        resume_advice="",
        board_window=window,
        board_key="refill-backfill-board",
        board_on_every_outcome=False,
    )
    published: list[date] = []
    with recorded_run(project, account, ending):
        for start, end in record.chunks:
            chunk = planning.Chunk(start, end)
            variables = window_vars(start, end, run_id, is_backfill=True)
            with _locked(context, chunk.days):
                # checked again now that the warehouse is ours: a daily run may have
                # published one of this chunk's days since the check above
                with ops.connect(warehouse, read_only=True) as connection:
                    now = preview_store.read_published_state(connection, record.models, start, end)
                changed = rules.published_state_changed(record, now, chunk.days)
                if changed is not None:
                    raise RefillError(
                        f"--from-preview stopped before chunk {chunk}: {changed}; "
                        f"{len(published)} day(s) before it are published; run the preview again"
                    )
                started = ops.utc_now()
                result = project.invoke(
                    [
                        "run-operation",
                        "refill_publish_preview",
                        "--args",
                        json.dumps({"preview_id": preview_id}),
                        "--vars",
                        json.dumps(variables),
                    ]
                )
                message = _operation_message(result)
                with ops.connect(warehouse) as connection:
                    record_attempt(
                        connection,
                        chunk.days,
                        ops.Attempt(
                            run_id,
                            "backfill",
                            start,
                            end,
                            1,
                            "published" if result.success else "failed",
                            message,
                            started,
                            ops.utc_now(),
                        ),
                        None if result.success else FailedStep.PUBLISH,
                    )
            if not result.success:
                raise RefillError(
                    f"publishing preview {preview_id}: chunk {chunk} failed: {message}; "
                    f"the chunks before it are published",
                    failed_step=FailedStep.PUBLISH,
                )
            published += chunk.days
            account.partitions = list(published)
            logger.info("preview %s: chunk %s published", preview_id, chunk)
        with _locked(context), ops.connect(warehouse) as connection:
            preview_store.drop_preview(connection, preview_id)
        message = f"backfill {window}: published {len(published)} day(s) from preview {preview_id}"
        account.close("succeeded", message)
    return PreviewOutcome(preview_id, message, [], published, time.monotonic() - clock)


def _operation_message(result) -> str:
    """A run-operation's outcome in one line ('ok', or its error's first line)."""
    if result.success:
        return "ok"
    error = result.exception
    if error is None:
        results = getattr(result.result, "results", None) or []
        error = next((r.message for r in results if getattr(r, "message", None)), "failed")
    return str(error).strip().splitlines()[0] if str(error).strip() else "failed"


def _what_changed(project: DbtProject, record: rules.PreviewRecord) -> str | None:
    fingerprints: dict[date, set[str]] = {}
    for verdict, each in readiness.datasets_window_readiness(
        settings.landing_root(), project.catalog.names, record.start, record.end
    ):
        fingerprints[verdict.day] = {v.source_fingerprint for v in each if v.source_fingerprint}
    with ops.connect(settings.warehouse_path(), read_only=True) as connection:
        published = preview_store.read_published_state(
            connection, record.models, record.start, record.end
        )
    return rules.what_changed(
        record,
        now=ops.utc_now(),
        code_versions=project.code_versions(),
        current_fingerprints=fingerprints,
        published=published,
        current_references=project.catalog.reference_fingerprints(record.start, record.end),
    )


def preview_path(project, plan, selection, report, asked: dict):
    """The backfill flow's `--preview` and `--from-preview ID` (a `confirm` naming a preview),
    once it has planned: `asked` holds the flow's parameters; fills the flow's `report`."""
    require_transactions(warehouse_at(), "a restatement preview (--preview, --from-preview)")
    parameters = {
        name: asked[name]
        for name in ("start", "end", "order", "chunk_days", "chunk_lines", "restate", "select")
    }
    if isinstance(asked["confirm"], str):
        outcome = publish_from_preview(
            project,
            asked["confirm"],
            plan.window,
            parameters,
            command_line=asked["command_line"],
            lock_wait_seconds=asked["lock_wait_seconds"],
        )
        report.published = outcome.published_days
    elif not plan.chunks:
        raise RefillError(
            f"nothing to preview in {plan.window}: every day is published and current "
            "(add --restate to preview restating them) or not ready"
        )
    else:
        outcome = run_preview(
            project,
            plan,
            selection,
            parameters,
            expect_change=asked["expect_change"],
            report_dir=asked["report_dir"],
            command_line=asked["command_line"],
            lock_wait_seconds=asked["lock_wait_seconds"],
        )
    report.preview = outcome
    report.seconds = outcome.seconds
    return report
