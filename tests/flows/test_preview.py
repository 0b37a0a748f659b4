"""The restatement preview: `--preview` writes nothing consumers read and reports old vs
new; `--from-preview ID` publishes exactly what a direct `--restate --yes` run would, and
signs it off in the run log; it refuses after a re-export, a code change, or a run that
published one of its days."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import date, timedelta
from decimal import Decimal

import duckdb
import pytest
import yaml
from prefect.flows import load_flow_from_entrypoint

from flows.tasks import run_flow
from harness import overlay
from refill import settings
from refill.errors import RefillError
from refill.sample_data import DaySpec, write_day, write_days
from refill.warehouse.dbt_runner import shared_project
from tests.conftest import Workspace
from tests.helpers import (
    FX_SEED,
    armed_dbt_project,
    consumer_results,
    copy_workspace,
    hold_lock_in_another_process,
    query,
    set_fx_rate,
    snapshot,
)
from tests.runs import run_backfill, run_daily

pytestmark = pytest.mark.usefixtures("prefect_harness")

D1 = date(2026, 3, 1)
DAYS = 6


def d(n: int) -> date:
    return D1 + timedelta(days=n - 1)


@pytest.fixture(scope="module")
def six_days_published(prefect_harness, tmp_path_factory) -> Workspace:
    """Six days landed and published by `backfill`, once for the module: each test starts
    from a copy."""
    template = tmp_path_factory.mktemp("six-days-published")
    built = Workspace(template / "landing", template / "warehouse" / "refill.duckdb")
    built.landing.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_LANDING", str(built.landing))
        patch.setenv("REFILL_WAREHOUSE", str(built.warehouse))
        write_days(built.landing, D1, DAYS)
        run_backfill(start=d(1), end=d(DAYS), chunk_days=3)
    return built


def published_and_reexported(workspace: Workspace, six_days_published: Workspace) -> None:
    """Six days published (a copy of the module's), then day 5 re-exported with other
    payments (its numbers change)."""
    copy_workspace(six_days_published, workspace)
    write_day(workspace.landing, d(5), DaySpec(payments=230), seed=11)


def preview(**parameters):
    return run_backfill(
        start=d(1), end=d(DAYS), chunk_days=3, restate=True, preview=True, **parameters
    ).preview


def publish(preview_id: str, **parameters):
    return run_backfill(
        start=d(1), end=d(DAYS), chunk_days=3, restate=True, confirm=preview_id, **parameters
    )


def test_a_preview_leaves_what_consumers_read_equal_and_reports_the_change(
    workspace, tmp_path, six_days_published
):
    published_and_reexported(workspace, six_days_published)
    before = consumer_results(workspace.warehouse)

    outcome = preview(expect_change=f"{d(1)}..{d(3)}", report_dir=str(tmp_path / "reports"))

    assert consumer_results(workspace.warehouse) == before
    saved = json.loads((tmp_path / "reports" / outcome.preview_id / "report.json").read_text())
    assert saved["days_changed"] == [d(5).isoformat()]
    assert saved["unexpected"] == [d(5).isoformat()]  # outside --expect-change d1..d3
    facts = [row for row in saved["days"] if row["model"] == "fct_payments"]
    changed = {row["day"]: row for row in facts if row["old_rows"] != row["new_rows"]}
    assert list(changed) == [d(5).isoformat()]
    new_rows, new_total = query(
        workspace.warehouse,
        "select count(*), sum(amount_usd) from preview."
        f'"{outcome.preview_id}__main__fct_payments" where event_date = ?',
        [d(5)],
    )[0]
    assert changed[d(5).isoformat()]["new_rows"] == new_rows
    assert str(new_total) == changed[d(5).isoformat()]["new_amount"]
    keyed = {row["model"] for row in saved["by_key"] if row["amount_change"] != "0.00"}
    assert keyed == {"fct_daily_revenue_v1", "fct_daily_revenue_v2"}
    assert "changed outside it: " + d(5).isoformat() in outcome.text
    assert (tmp_path / "reports" / outcome.preview_id / "report.html").read_text().count(
        "<tr>"
    ) == DAYS + 1  # a row per day, and the header


def test_publishing_a_preview_gives_the_warehouse_a_direct_restatement_gives(
    workspace, tmp_path, monkeypatch, six_days_published
):
    published_and_reexported(workspace, six_days_published)
    direct = tmp_path / "direct" / "refill.duckdb"
    direct.parent.mkdir()
    shutil.copy(workspace.warehouse, direct)

    outcome = preview()
    report = publish(outcome.preview_id)

    assert sorted(report.published) == [d(n) for n in range(1, DAYS + 1)]
    (run_id, approved), *_ = query(
        workspace.warehouse,
        "select run_id, parameters->>'from_preview' from ops.run_log "
        "where outcome = 'succeeded' order by started_at desc",
    )
    assert approved == outcome.preview_id  # the sign-off names the preview it approved
    ledger_runs = query(workspace.warehouse, "select distinct run_id from ops.partition_ledger")
    assert ledger_runs == [(run_id,)]
    assert query(workspace.warehouse, "select distinct _run_id from main.fct_payments") == [
        (run_id,)
    ]
    assert query(
        workspace.warehouse,
        "select count(*) from information_schema.tables where table_schema = 'preview'",
    ) == [(0,)]  # published: dropped

    monkeypatch.setenv("REFILL_WAREHOUSE", str(direct))
    run_backfill(start=d(1), end=d(DAYS), chunk_days=3, restate=True, confirm=True)
    assert snapshot(direct) == snapshot(workspace.warehouse)


def test_a_preview_is_refused_after_a_reexport_of_one_of_its_days(workspace, six_days_published):
    published_and_reexported(workspace, six_days_published)
    outcome = preview()
    before = consumer_results(workspace.warehouse)
    write_day(workspace.landing, d(2), DaySpec(payments=190), seed=23)

    with pytest.raises(RefillError, match=f"day {d(2)} was re-exported since preview"):
        publish(outcome.preview_id)
    assert consumer_results(workspace.warehouse) == before


def test_an_expired_preview_is_refused_and_dropped(workspace, monkeypatch, six_days_published):
    from refill.warehouse import ops

    published_and_reexported(workspace, six_days_published)
    outcome = preview()
    before = consumer_results(workspace.warehouse)
    later = ops.utc_now() + timedelta(days=settings.PREVIEW_KEEP_DAYS + 1)
    monkeypatch.setattr(ops, "utc_now", lambda: later)

    with pytest.raises(RefillError, match=f"preview {outcome.preview_id} expired .*dropped"):
        publish(outcome.preview_id)
    assert consumer_results(workspace.warehouse) == before
    kept = query(
        workspace.warehouse,
        "select count(*) from ops.refill_previews where preview_id = ?",
        [outcome.preview_id],
    )
    assert kept == [(0,)]


def test_a_preview_is_refused_after_a_daily_run_published_one_of_its_days(
    workspace, six_days_published
):
    published_and_reexported(workspace, six_days_published)
    outcome = preview()
    run_daily(d(6), confirm=True)
    before = consumer_results(workspace.warehouse)

    with pytest.raises(RefillError, match=f"day {d(6)} of .* was published by run"):
        publish(outcome.preview_id)
    assert consumer_results(workspace.warehouse) == before


def test_a_preview_is_refused_after_a_code_change(
    workspace, monkeypatch, tmp_path, six_days_published
):
    published_and_reexported(workspace, six_days_published)
    outcome = preview()
    before = consumer_results(workspace.warehouse)
    # the project as it is after an edit of fct_payments's meaning (a comment alone changes
    # no code version), so its code version and that of every mart below it change
    copy = tmp_path / "project"
    overlay.build_copy(settings.project_dir(), copy)
    model = copy / "models" / "marts" / "payments" / "fct_payments.sql"
    edited = model.read_text().replace("usd_per_unit, 2)", "usd_per_unit, 3)")
    assert edited != model.read_text()
    model.write_text(edited)
    monkeypatch.setenv(settings.PROJECT_DIR_ENV, str(copy))
    shared_project.cache_clear()
    try:
        with pytest.raises(RefillError, match="the code of fct_.* changed since preview"):
            publish(outcome.preview_id)
    finally:
        monkeypatch.undo()
        shared_project.cache_clear()
    assert consumer_results(workspace.warehouse) == before


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--from-preview", "p0123456789ab"], "add --restate --yes to sign it off"),
        (["--restate", "--yes", "--from-preview", "p0123"], "is not a preview id"),
        (["--preview", "--from-preview", "p0123456789ab"], "not with --preview"),
        (["--expect-change", "2026-03-01..2026-03-02"], "--expect-change applies to --preview"),
    ],
)
def test_a_preview_option_misused_is_a_usage_error_before_anything_runs(
    workspace, capsys, extra, message
):
    from refill.cli import main
    from refill.errors import EXIT_USAGE

    status = main(["backfill", "--start", str(d(1)), "--end", str(d(2)), *extra])

    error = capsys.readouterr().err.strip()
    assert status == EXIT_USAGE and message in error and "\n" not in error
    assert not workspace.warehouse.exists()


def test_gaps_fix_preview_keeps_the_fix_unpublished_and_backfill_can_publish_it(
    workspace, capsys, tmp_path, monkeypatch, six_days_published
):
    from refill.cli import main

    # day 5 is stale: a gap `gaps --fix` rebuilds
    published_and_reexported(workspace, six_days_published)
    monkeypatch.setenv("REFILL_PREVIEWS", str(tmp_path / "reports"))
    before = consumer_results(workspace.warehouse)
    window = ["--start", str(d(1)), "--end", str(d(DAYS))]

    status = main(["gaps", *window, "--fix", "--preview", "--retries", "1"])

    printed = capsys.readouterr().out
    assert status == 0 and "as a preview (nothing published)" in printed
    assert consumer_results(workspace.warehouse) == before
    (preview_id,) = {
        row[0] for row in query(workspace.warehouse, "select preview_id from ops.refill_previews")
    }
    assert f"preview {preview_id}" in printed  # the id to sign off, printed
    page = tmp_path / "reports" / preview_id / "report.html"
    assert str(page) in printed and page.exists()
    saved = json.loads((tmp_path / "reports" / preview_id / "report.json").read_text())
    assert saved["days_changed"] == [d(5).isoformat()]
    assert main(["gaps", *window]) == 1  # still a gap: nothing was published

    # the fix it kept is what `backfill --restate --yes --from-preview ID` publishes
    report = run_backfill(start=d(5), end=d(5), restate=True, confirm=preview_id)
    assert report.published == [d(5)]
    assert main(["gaps", *window]) == 0


def run_backfill_deployment(**parameters):
    """The backfill deployment as a scheduler runs it: prefect.yaml's parameters with these
    on top, validated by the flow's signature as the server does (so `confirm` arrives as a
    JSON value: a bool, or a string naming a preview)."""
    deployments = yaml.safe_load((settings.PACKAGE_PROJECT_DIR / "prefect.yaml").read_text())
    deployment = next(d for d in deployments["deployments"] if d["name"] == "backfill")
    flow = load_flow_from_entrypoint(deployment["entrypoint"])
    validated = flow.validate_parameters({**deployment["parameters"], **parameters})
    return run_flow(flow, **validated)


def test_the_backfill_deployment_publishes_the_preview_its_confirm_names(
    workspace, six_days_published
):
    published_and_reexported(workspace, six_days_published)
    outcome = preview()

    report = run_backfill_deployment(
        start=d(1).isoformat(), end=d(DAYS).isoformat(), restate=True, confirm=outcome.preview_id
    )

    assert sorted(report.published) == [d(n) for n in range(1, DAYS + 1)]
    assert report.preview.preview_id == outcome.preview_id
    assert query(
        workspace.warehouse,
        "select parameters->>'from_preview' from ops.run_log "
        "where outcome = 'succeeded' order by started_at desc limit 1",
    ) == [(outcome.preview_id,)]


@pytest.mark.parametrize(
    "parameters, message",
    [
        ({"confirm": 'p0123"; drop table main.fct_payments; --'}, "is not a preview id"),
        ({"confirm": "yes"}, "is not a preview id"),
        ({"confirm": "p0123456789ab", "preview": True}, "and preview: true makes one"),
    ],
)
def test_the_backfill_deployment_refuses_a_confirm_that_is_not_a_preview_id_in_one_line(
    workspace, parameters, message, six_days_published
):
    published_and_reexported(workspace, six_days_published)
    before = consumer_results(workspace.warehouse)
    runs = query(workspace.warehouse, "select * from ops.run_log order by all")

    with pytest.raises(RefillError, match=message) as refused:
        run_backfill_deployment(
            start=d(1).isoformat(), end=d(DAYS).isoformat(), restate=True, **parameters
        )

    assert "\n" not in str(refused.value)
    assert consumer_results(workspace.warehouse) == before
    assert query(workspace.warehouse, "select * from ops.run_log order by all") == runs


# -- every writing path, a selection as a set, the report, what a kill leaves ------------


def test_a_day_reexported_while_from_preview_waits_for_the_lock_is_refused(
    workspace, monkeypatch, six_days_published
):
    # GIVEN a preview, and the warehouse held by another process
    published_and_reexported(workspace, six_days_published)
    outcome = preview()
    before = consumer_results(workspace.warehouse)
    from refill.warehouse import locking
    from refill.warehouse.duckdb_engine import DuckDBWarehouse

    take_the_lock = DuckDBWarehouse.lock
    reexported = []

    def reexport_while_it_waits(self, **kwargs):
        # the publishing run asks for the warehouse (once it has checked the preview) and
        # waits for the holder; meanwhile the exporter rewrites day 2
        if not reexported and kwargs["priority"] != locking.READ:
            write_day(workspace.landing, d(2), DaySpec(payments=190), seed=23)
            reexported.append(d(2))
        return take_the_lock(self, **kwargs)

    monkeypatch.setattr(DuckDBWarehouse, "lock", reexport_while_it_waits)
    holder = hold_lock_in_another_process(workspace.warehouse, 4)
    try:
        # WHEN --from-preview checks the landing, waits for the lock, and day 2 is
        # re-exported meanwhile
        with pytest.raises(RefillError, match=f"day {d(2)} was re-exported since preview"):
            publish(outcome.preview_id)
    finally:
        holder.wait()
    # THEN nothing of the preview was published
    assert reexported == [d(2)]
    assert consumer_results(workspace.warehouse) == before


def publish_operation(preview_id: str, start: date, end: date):
    """`dbt run-operation refill_publish_preview`, as a user could type it (its outcome
    carries the macro's own error)."""
    return shared_project().run_operation(
        "refill_publish_preview",
        {"preview_id": preview_id},
        {"start_date": start.isoformat(), "end_date": end.isoformat()},
    )


@contextlib.contextmanager
def rate_corrected(tmp_path, monkeypatch, day: date):
    """The project as it is after the EUR rate of `day` was corrected in its fx seed (a copy
    of it: refill and dbt run on the copy meanwhile)."""
    copy = tmp_path / "project"
    overlay.build_copy(settings.project_dir(), copy)
    set_fx_rate(copy / FX_SEED, day, "EUR", Decimal("1.234567"))
    with monkeypatch.context() as patch:
        patch.setenv(settings.PROJECT_DIR_ENV, str(copy))
        shared_project.cache_clear()
        try:
            yield
        finally:
            shared_project.cache_clear()


def drop_kept_tables(warehouse, preview_id: str) -> None:
    """Every table a preview kept (schema `preview`, named for its id) dropped."""
    with duckdb.connect(str(warehouse)) as connection:
        kept = connection.execute(
            "select table_name from information_schema.tables "
            "where table_schema = 'preview' and starts_with(table_name, ?)",
            [f"{preview_id}__"],
        ).fetchall()
        assert kept, f"preview {preview_id} kept no table to drop"
        for (name,) in kept:
            connection.execute(f'drop table preview."{name}"')


@pytest.mark.parametrize(
    "change, refusal",
    [
        ("a window wider than its chunk", "is not a chunk of preview"),
        ("a day re-exported", f"day {d(6)} was re-exported since preview"),
        ("a rate corrected", "fx_rates_daily changed for day 2026-03-0[4-6] since preview"),
        ("its kept tables dropped", r"preview: \S+ keeps no rows; nothing published"),
    ],
)
def test_plain_dbt_publish_preview_refuses_what_refill_refuses(
    workspace, tmp_path, monkeypatch, change, refusal, six_days_published
):
    # GIVEN a preview of days 4-6 (one chunk), and perhaps day 6 re-exported since, or the
    # EUR rate of day 6 corrected in the seed file since
    published_and_reexported(workspace, six_days_published)
    outcome = run_backfill(start=d(4), end=d(DAYS), restate=True, preview=True).preview
    window = (d(1), d(DAYS))
    corrected = contextlib.nullcontext()
    if change == "a day re-exported":
        write_day(workspace.landing, d(6), DaySpec(payments=150), seed=31)
        window = (d(4), d(DAYS))
    if change == "a rate corrected":
        corrected = rate_corrected(tmp_path, monkeypatch, d(6))
        window = (d(4), d(DAYS))
    if change == "its kept tables dropped":  # by hand, say, to free the space
        drop_kept_tables(workspace.warehouse, outcome.preview_id)
        window = (d(4), d(DAYS))
    before = consumer_results(workspace.warehouse)

    # WHEN a plain dbt run-operation publishes it (over days 1-6, or exactly its chunk)
    with corrected:
        result = publish_operation(outcome.preview_id, *window)

    # THEN the macro refuses it as refill does, saying why: days 1-3 still in every model,
    # the ledger and data-as-of; nothing changed
    assert not result.success
    assert re.search(refusal, result.message), result.message
    assert consumer_results(workspace.warehouse) == before


def test_from_preview_is_refused_after_a_rate_its_days_read_was_corrected(
    workspace, tmp_path, monkeypatch, six_days_published
):
    # GIVEN a preview of days 1-6, then the EUR rate of day 2 corrected in the seed file
    published_and_reexported(workspace, six_days_published)
    outcome = preview()
    before = consumer_results(workspace.warehouse)

    # WHEN --from-preview publishes it, THEN it is refused naming the seed and a day that
    # reads the rate (fct_payments reads day 2's, fct_daily_revenue_v1 March's average)
    with rate_corrected(tmp_path, monkeypatch, d(2)):
        with pytest.raises(RefillError, match="fx_rates_daily changed for day 2026-03-0"):
            publish(outcome.preview_id)
    assert consumer_results(workspace.warehouse) == before


def test_from_preview_with_a_select_that_is_not_the_previews_is_refused(
    workspace, six_days_published
):
    # GIVEN a preview of every model
    published_and_reexported(workspace, six_days_published)
    outcome = preview()
    before = consumer_results(workspace.warehouse)

    # WHEN it is published with --select payments_quarantine (that model alone)
    with pytest.raises(RefillError, match="--select") as refused:
        publish(outcome.preview_id, select="payments_quarantine")

    # THEN one line refuses it and nothing changed
    assert "\n" not in str(refused.value)
    assert consumer_results(workspace.warehouse) == before
    # AND a --select whose models are the preview's (fct_payments and every model below it)
    # publishes it, and the run log says which models it published
    publish(outcome.preview_id, select="fct_payments")
    ((models, given),) = query(
        workspace.warehouse,
        "select parameters->'select', parameters->>'select_given' from ops.run_log "
        "where outcome = 'succeeded' order by started_at desc limit 1",
    )
    assert json.loads(models) == sorted(shared_project().partitioned_models())
    assert given == "fct_payments"


def test_a_preview_of_days_that_are_not_contiguous_reports_only_those_days(workspace, tmp_path):
    # GIVEN six published days, days 2 and 5 re-exported (stale), the days between current
    write_days(workspace.landing, D1, DAYS)
    run_backfill(start=d(1), end=d(DAYS), chunk_days=3)
    write_day(workspace.landing, d(2), DaySpec(payments=120), seed=13)
    write_day(workspace.landing, d(5), DaySpec(payments=230), seed=11)

    # WHEN a preview (no --restate: the stale days only) reports the change
    outcome = run_backfill(
        start=d(1), end=d(DAYS), preview=True, report_dir=str(tmp_path / "reports")
    ).preview

    # THEN only days 2 and 5 change; days 3 and 4 are not reported as going to 0 rows
    saved = json.loads((tmp_path / "reports" / outcome.preview_id / "report.json").read_text())
    assert saved["days_changed"] == [d(2).isoformat(), d(5).isoformat()]
    assert {row["day"] for row in saved["days"]} == {d(2).isoformat(), d(5).isoformat()}
    assert {row["day"] for row in saved["by_key"]} <= {d(2).isoformat(), d(5).isoformat()}


def test_a_failed_from_preview_chunk_says_why(workspace, monkeypatch, six_days_published):
    # GIVEN a preview, and a project whose publish fails before its commit
    published_and_reexported(workspace, six_days_published)
    outcome = preview()
    before = consumer_results(workspace.warehouse)
    armed = armed_dbt_project()
    monkeypatch.setenv(settings.PROJECT_DIR_ENV, str(armed.project_dir))
    monkeypatch.setenv("REFILL_TEST_FAULT", "before_commit")
    shared_project.cache_clear()
    try:
        # WHEN it is published
        with pytest.raises(RefillError) as failed:
            publish(outcome.preview_id)
    finally:
        monkeypatch.undo()
        shared_project.cache_clear()

    # THEN the one line and the chunk's attempt carry the cause, not "failed"
    assert "refill fault injected at before_commit" in str(failed.value)
    (message,) = query(
        workspace.warehouse,
        "select message from ops.partition_attempts where outcome = 'failed' "
        "order by ended_at desc limit 1",
    )[0]
    assert "refill fault injected at before_commit" in message
    assert consumer_results(workspace.warehouse) == before


def test_a_from_preview_chunk_that_fails_after_another_published_says_exactly_which_days_are(
    workspace, monkeypatch, six_days_published
):
    # GIVEN a preview of two chunks (days 4-6 first, newest-first, then days 1-3), whose
    # second chunk's publish fails
    import flows.preview_publish as publishing
    from refill.errors import FailedStep
    from refill.warehouse.dbt_outcomes import BuildOutcome

    published_and_reexported(workspace, six_days_published)
    outcome = preview()
    real_publish = publishing._publish_chunk
    calls = []

    def second_fails(project, context, preview_id, chunk):
        calls.append(chunk)
        if len(calls) == 1:
            return real_publish(project, context, preview_id, chunk)
        return BuildOutcome(
            False, "refill publish: the disk is full", {}, FailedStep.PUBLISH, "publish"
        )

    monkeypatch.setattr(publishing, "_publish_chunk", second_fails)

    # WHEN it is published
    with pytest.raises(RefillError) as failed:
        publish(outcome.preview_id)

    # THEN the line says which days this run published and which it did not, and nothing
    # that contradicts it
    message = str(failed.value)
    assert f"chunk {d(1)}..{d(3)} failed at publish: refill publish: the disk is full." in message
    assert (
        f"Published by this run: 3 day(s) ({d(4)}..{d(6)}); "
        f"not published: 3 day(s) ({d(1)}..{d(3)}), as they were." in message
    )
    assert "nothing was published" not in message.lower()
    assert "A rerun fails the same way until the cause in logs/dbt.log is fixed" in message


def _start_preview_process(workspace, chunks: int) -> subprocess.Popen:
    """`refill backfill --restate --preview` of `chunks` one-day chunks, in its own process
    (the session's Prefect server), oldest first."""
    from prefect.settings import PREFECT_API_URL

    environment = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}
    return subprocess.Popen(
        [sys.executable, "-m", "refill", "backfill", "--start", str(d(1)), "--end"]
        + [str(d(chunks)), "--chunk-days", "1", "--order", "oldest-first", "--restate"]
        + ["--preview", "--retries", "1"],
        cwd=settings.PACKAGE_PROJECT_DIR,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _read_until(child: subprocess.Popen, marker: str, timeout: float = 240) -> str:
    lines = []
    deadline = time.monotonic() + timeout
    for line in child.stdout:
        lines.append(line)
        if marker in line:
            return "".join(lines)
        assert time.monotonic() < deadline, "".join(lines)
    raise AssertionError("the command ended first:\n" + "".join(lines))


def _preview_tables(warehouse) -> set[str]:
    rows = query(
        warehouse,
        "select table_name from information_schema.tables where table_schema = 'preview'",
    )
    return {name for (name,) in rows}


def test_the_next_command_drops_what_a_killed_preview_left(workspace, six_days_published):
    # GIVEN a preview killed (SIGKILL) while it builds its third chunk
    published_and_reexported(workspace, six_days_published)
    child = _start_preview_process(workspace, chunks=DAYS)
    try:
        _read_until(child, f"chunk {d(3)}")
    finally:
        child.kill()
        child.wait()
    left = _preview_tables(workspace.warehouse)
    assert left, "the killed preview kept no chunk"

    # WHEN the next command runs
    run_daily(d(6), confirm=True)

    # THEN the killed preview's tables are gone
    assert not _preview_tables(workspace.warehouse) & left


def test_a_live_preview_keeps_its_tables_while_other_commands_run(workspace, six_days_published):
    # GIVEN a preview building in another process, with chunks kept already
    published_and_reexported(workspace, six_days_published)
    child = _start_preview_process(workspace, chunks=DAYS)
    try:
        _read_until(child, f"chunk {d(3)}")
        # WHEN a daily run goes between its chunks
        run_daily(d(6), confirm=True)
        output, _ = child.communicate(timeout=300)
    finally:
        child.kill()
        child.wait()

    # THEN the preview completes with every chunk it kept
    assert child.returncode == 0, output
    (preview_id,) = {
        row[0] for row in query(workspace.warehouse, "select preview_id from ops.refill_previews")
    }
    days = query(
        workspace.warehouse,
        f'select count(distinct partition_date) from preview."{preview_id}__main__fct_payments'
        '__ledger"',
    )
    assert days == [(DAYS,)]


def test_a_plain_build_cannot_add_to_a_recorded_preview(workspace, six_days_published):
    # GIVEN a preview, recorded
    published_and_reexported(workspace, six_days_published)
    outcome = preview()
    kept = query(
        workspace.warehouse,
        f'select count(*) from preview."{outcome.preview_id}__main__fct_payments"',
    )

    # WHEN a plain dbt build names it
    variables = {"start_date": str(d(5)), "end_date": str(d(5))}
    built = shared_project().build(
        {**variables, "refill_preview_id": outcome.preview_id}, include_seeds=False
    )

    # THEN it is refused, and the preview keeps what it kept
    assert not built.success and "is recorded" in built.message
    assert (
        query(
            workspace.warehouse,
            f'select count(*) from preview."{outcome.preview_id}__main__fct_payments"',
        )
        == kept
    )
