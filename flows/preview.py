"""A restatement preview, and publishing one: the two paths of the backfill flow that
`--preview` and `--from-preview ID` take (flows/backfill.py hands over to them once it
has planned).

`run_preview` builds every chunk of the plan exactly as a real run does (the same dbt
build, audits and window tests) with the var `refill_preview_id`: on-run-end keeps the
chunk under the preview's id (schema `preview`) instead of publishing it, so nothing
consumers read changes. It then records the preview (ops.refill_previews: the plan, the
code versions, source and reference fingerprints the chunks were computed from, the
published state of each day) and reports old vs new.

`publish_from_preview` (flows/preview_publish.py) publishes what a preview kept.

Both stop between chunks at a first Ctrl-C or SIGTERM, as a backfill does
(refill/interrupts.py): the chunk in flight commits (or is kept) whole, none starts after.
"""

from __future__ import annotations

import time
from datetime import timedelta

from prefect import get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.runtime import flow_run

from flows.backfill_plan import PlannedBackfill
from flows.lifecycle import RunEnding, recorded_run
from flows.preview_publish import PreviewOutcome, preview_context, publish_from_preview
from flows.tasks import RunAccount, combined_code_version
from refill import interrupts, settings
from refill.errors import FailedStep, RefillError
from refill.rules import preview as rules
from refill.rules.plan import BackfillPlan
from refill.rules.window import window_vars
from refill.views import preview_report
from refill.warehouse import ops, preview_changes, preview_store
from refill.warehouse.dbt_runner import DbtProject
from refill.warehouse.engine import require_previews, warehouse_at


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
    context = preview_context(run_id, "backfill --preview", selection, lock_wait_seconds)
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
        resume_advice="Nothing was published or kept; run the preview again.",
        board_window=window,
        board_key="refill-preview-board",
        board_on_every_outcome=False,
    )
    with recorded_run(project, account, ending):
        try:
            for chunk in plan.chunks:
                interrupts.raise_if_requested(f"before chunk {chunk}")
                variables = window_vars(chunk.start, chunk.end, run_id, is_backfill=True)
                variables["refill_preview_id"] = preview_id
                with context.lock(chunk.days):
                    # the last safe point: a stop asked while it waited starts no build
                    interrupts.raise_if_requested(f"before chunk {chunk}")
                    logger.info("preview %s: chunk %s: building, to keep", preview_id, chunk)
                    outcome = project.build(variables, selection, include_seeds=False)
                if not outcome.success:
                    raise RefillError(
                        f"preview {preview_id}: chunk {chunk} failed at {outcome.failed_step}: "
                        f"{outcome.message}; nothing published, the preview is dropped",
                        failed_step=outcome.failed_step or FailedStep.OTHER,
                    )
            with context.lock(), ops.connect(settings.warehouse_path()) as connection:
                built = [day for chunk in plan.chunks for day in chunk.days]
                report = preview_changes.report(
                    connection, project.catalog, preview_id, window.start, window.end, built
                )
                report.expected = expected
                record = _record(connection, preview_id, run_id, plan, selection, project)
                text = preview_report.render(report, record)
                # saved before the record: a report that cannot be saved keeps no preview
                saved = preview_report.save(report, record, _report_folder(report_dir, preview_id))
                preview_store.save_record(connection, record, report.as_json())
                for old in preview_store.expired_previews(connection, ops.utc_now()):
                    preview_store.drop_preview(connection, old)
                    logger.info("preview %s expired: dropped", old)
        except BaseException:
            with context.lock(), ops.connect(settings.warehouse_path()) as connection:
                preview_store.drop_preview(connection, preview_id)
            raise
        _publish_artifact(report, record)
        message = (
            f"preview {preview_id} of {window}: {len(report.days_changed)} day(s) change, "
            f"{len(report.days_unchanged)} unchanged; nothing published"
        )
        account.close("succeeded", message)
    return PreviewOutcome(preview_id, text, saved, [], time.monotonic() - clock)


def _record(
    connection, preview_id, run_id, plan: BackfillPlan, selection, project: DbtProject
) -> rules.PreviewRecord:
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
        datasets=list(project.catalog.names),
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


def preview_path(
    project: DbtProject,
    planned: PlannedBackfill,
    report,
    *,
    confirm: bool | str,
    command_line: str,
    lock_wait_seconds: float,
    expect_change: str | None,
    report_dir: str | None,
):
    """The backfill flow's `--preview` and `--from-preview ID` (`confirm` naming a preview),
    once it has planned; fills the flow's `report`."""
    require_previews(warehouse_at(), "a restatement preview (--preview, --from-preview)")
    plan, selection = planned.plan, planned.selection
    # what the run builds or publishes (the selection and every model below it), and as typed
    parameters = planned.parameters()
    if isinstance(confirm, str):
        outcome = publish_from_preview(
            project,
            confirm,
            plan.window,
            selection,
            parameters,
            command_line=command_line,
            lock_wait_seconds=lock_wait_seconds,
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
            expect_change=expect_change,
            report_dir=report_dir,
            command_line=command_line,
            lock_wait_seconds=lock_wait_seconds,
        )
    report.preview = outcome
    report.seconds = outcome.seconds
    return report
