"""The dbt pipeline on real DuckDB warehouses built from generated landing data."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta

import pytest

from refill.rules.window import window_vars
from refill.sample_data import DaySpec, write_day, write_days
from tests.helpers import (
    armed_dbt_project,
    expected_day,
    kept_lines,
    published_by_day,
    query,
    relation_exists,
    snapshot,
)

JAN = date(2026, 1, 1)


def day(n: int) -> date:
    return JAN + timedelta(days=n - 1)


def build(dbt_project, first: int, last: int, **extra):
    return dbt_project.build({**window_vars(day(first), day(last)), **extra})


def assert_matches_landing(workspace, days):
    """Each day's published count and sum equal the source's; no payment event (id and
    day, the grain) published twice."""
    published = published_by_day(workspace.warehouse)
    for n in days:
        truth = expected_day(workspace.landing, day(n))
        assert published.get(day(n), (0, 0)) == (truth.published, truth.amount or 0), day(n)
    duplicated = query(
        workspace.warehouse,
        "select transaction_id, event_date from main.fct_payments group by all having count(*) > 1",
    )
    assert duplicated == []


def test_rebuilding_any_window_in_any_order_gives_the_same_warehouse(
    dbt_project, workspace, tmp_path, monkeypatch
):
    # GIVEN nine landed days with replays, malformed lines and conflicts
    write_days(workspace.landing, JAN, 9, DaySpec(payments=150, malformed_rate=0.05))

    # WHEN a week is built, rebuilt, a day rebuilt, and an overlapping window built
    assert build(dbt_project, 1, 7).success
    first_week = snapshot(workspace.warehouse)
    assert_matches_landing(workspace, range(1, 8))

    assert build(dbt_project, 1, 7).success
    assert snapshot(workspace.warehouse) == first_week

    assert build(dbt_project, 4, 4).success
    assert snapshot(workspace.warehouse) == first_week

    assert build(dbt_project, 5, 9).success
    assert_matches_landing(workspace, range(1, 10))
    forward = snapshot(workspace.warehouse)

    # AND a fresh warehouse is built one day at a time, newest first
    # (same file name: dbt names the DuckDB catalog after it, in the parsed manifest)
    reverse = tmp_path / "reverse" / "refill.duckdb"
    monkeypatch.setenv("REFILL_WAREHOUSE", str(reverse))
    for n in range(9, 0, -1):
        assert build(dbt_project, n, n).success

    # THEN both warehouses answer every query the same
    assert snapshot(reverse) == forward


@pytest.mark.parametrize("point", ["after_delete", "in_audit", "before_ledger"])
def test_a_run_that_fails_after_the_delete_leaves_everything_as_it_was(
    dbt_project, workspace, point, monkeypatch
):
    # GIVEN a published window, and a re-export that would change it
    write_days(workspace.landing, JAN, 3)
    assert build(dbt_project, 1, 3).success
    before = snapshot(workspace.warehouse, full=True)
    write_day(workspace.landing, day(2), DaySpec(amount_factor=2, export_version=2))

    # WHEN the rebuild fails at a point after the window's rows were deleted (a copy of
    # the project whose fault seam is armed: the product's seam renders nothing)
    monkeypatch.setenv("REFILL_TEST_FAULT", point)
    outcome = build(armed_dbt_project(), 1, 3)

    # THEN it says where, and every table and the ledger are exactly as before
    assert not outcome.success
    assert f"fault injected at {point}" in outcome.message
    assert snapshot(workspace.warehouse, full=True) == before


@pytest.mark.parametrize(
    "reexport",
    [
        DaySpec(keep_fraction=0.6, export_version=2),
        DaySpec(amount_factor=1.5, export_version=2),
        DaySpec(payments=0, export_version=2),
    ],
    ids=["fewer-lines", "changed-amounts", "now-empty"],
)
def test_a_reexported_day_rebuilt_matches_the_new_export(dbt_project, workspace, reexport):
    # GIVEN three published days
    write_days(workspace.landing, JAN, 3)
    assert build(dbt_project, 1, 3).success
    others_before = query(
        workspace.warehouse,
        "select * from main.fct_payments where event_date <> ? order by all",
        [day(2)],
    )
    (old_fingerprint,) = query(
        workspace.warehouse,
        "select source_fingerprint from ops.partition_ledger "
        "where model_name = 'fct_payments' and partition_date = ?",
        [day(2)],
    )[0]

    # WHEN day 2 is re-exported and rebuilt alone
    write_day(workspace.landing, day(2), reexport)
    assert build(dbt_project, 2, 2).success

    # THEN day 2 matches the new export, the other days are untouched, the ledger moved on
    assert_matches_landing(workspace, [1, 2, 3])
    assert (
        query(
            workspace.warehouse,
            "select * from main.fct_payments where event_date <> ? order by all",
            [day(2)],
        )
        == others_before
    )
    ledger = query(
        workspace.warehouse,
        "select source_fingerprint, rows_written, source_records from ops.partition_ledger "
        "where model_name = 'fct_payments' and partition_date = ?",
        [day(2)],
    )
    truth = expected_day(workspace.landing, day(2))
    assert ledger[0][0] != old_fingerprint
    assert ledger[0][1:] == (truth.published, truth.lines)


@pytest.mark.parametrize(
    "spec, reason",
    [
        (DaySpec(write_manifest=False), "no _SUCCESS manifest"),
        (DaySpec(manifest_overrides={"records": 3}), "_SUCCESS lists 3 records"),
        (DaySpec(manifest_overrides={"files": 5}), "_SUCCESS lists 5 files, found 2"),
    ],
    ids=["missing", "records-disagree", "files-disagree"],
)
def test_an_unready_day_stops_the_build_before_anything_is_written(
    dbt_project, workspace, spec, reason
):
    # GIVEN days 1-2 published, day 3 clean, day 4 not ready, and a day 5 with no folder
    write_days(workspace.landing, JAN, 3)
    write_day(workspace.landing, day(4), spec)
    assert build(dbt_project, 1, 2).success
    before = snapshot(workspace.warehouse, full=True)

    # WHEN a window over the unready days is built
    outcome = build(dbt_project, 2, 5)

    # THEN it fails naming every unready day and why, and nothing was written
    assert not outcome.success
    assert f"2026-01-04 ({reason}" in outcome.message
    assert "2026-01-05 (no landing folder)" in outcome.message
    assert "2026-01-03" not in outcome.message
    assert snapshot(workspace.warehouse, full=True) == before


def test_an_unready_day_on_a_fresh_warehouse_creates_no_table(dbt_project, workspace):
    write_day(workspace.landing, day(1), DaySpec(write_manifest=False))

    outcome = build(dbt_project, 1, 1)

    assert not outcome.success and "2026-01-01 (no _SUCCESS manifest)" in outcome.message
    assert not relation_exists(workspace.warehouse, "main", "fct_payments")


def test_every_landed_line_is_published_duplicate_or_quarantined(dbt_project, workspace):
    # GIVEN days with many replays, malformed lines and conflicts
    noisy = DaySpec(payments=300, replay_rate=0.1, malformed_rate=0.1, conflict_rate=0.05)
    write_days(workspace.landing, JAN, 3, noisy)

    # WHEN they are built
    assert build(dbt_project, 1, 3).success

    # THEN every line is accounted for, per day, as the independent oracle counts it
    for n in (1, 2, 3):
        truth = expected_day(workspace.landing, day(n))
        (quarantined,) = query(
            workspace.warehouse,
            "select count(*) from main.payments_quarantine where landed_date = ?",
            [day(n)],
        )[0]
        (records,) = query(
            workspace.warehouse,
            "select source_records from ops.partition_ledger "
            "where model_name = 'fct_payments' and partition_date = ?",
            [day(n)],
        )[0]
        assert quarantined == truth.quarantined
        assert records == truth.lines
        # AND each quarantined line, malformed or a conflicting version, keeps its text
        assert (
            kept_lines(workspace.warehouse, day(n), truth.quarantined_lines)
            == truth.quarantined_lines
        )
    reasons = {
        row[0]
        for row in query(
            workspace.warehouse, "select distinct quarantine_reason from main.payments_quarantine"
        )
    }
    assert "not valid JSON" in reasons
    assert any(r.startswith("conflicting versions of transaction") for r in reasons)
    assert any(r.startswith("unknown currency") for r in reasons)
    located = query(
        workspace.warehouse,
        "select count(*) from main.payments_quarantine "
        "where file_name like 'payments/dt=%/part-%.jsonl' and line_number >= 1",
    )[0][0]
    assert located == sum(expected_day(workspace.landing, day(n)).quarantined for n in (1, 2, 3))


def test_a_first_build_reads_and_writes_only_its_window(dbt_project, workspace):
    write_days(workspace.landing, JAN, 7)

    assert build(dbt_project, 5, 5).success

    assert query(workspace.warehouse, "select distinct event_date from main.fct_payments") == [
        (day(5),)
    ]
    assert query(
        workspace.warehouse, "select distinct landed_date from staging.stg_payments__lines"
    ) == [(day(5),)]


def test_without_a_window_an_existing_warehouse_refuses_and_full_refresh_rebuilds_all(
    dbt_project, workspace
):
    # GIVEN a warehouse built for two of four landed days
    write_days(workspace.landing, JAN, 4)
    assert build(dbt_project, 2, 3).success
    before = snapshot(workspace.warehouse, full=True)

    # WHEN dbt runs with no window
    refused = dbt_project.build({})

    # THEN it stops with a clear error and writes nothing
    assert not refused.success
    assert "no window given" in refused.message and "--full-refresh" in refused.message
    assert snapshot(workspace.warehouse, full=True) == before

    # AND --full-refresh rebuilds every landed day
    assert dbt_project.build({}, full_refresh=True).success
    assert sorted(published_by_day(workspace.warehouse)) == [day(n) for n in (1, 2, 3, 4)]
    assert_matches_landing(workspace, [1, 2, 3, 4])


@pytest.mark.parametrize(
    "variables, message",
    [
        ({"start_date": "2026-13-01", "end_date": "2026-01-02"}, "start_date=2026-13-01 is not"),
        ({"start_date": "yesterday", "end_date": "2026-01-02"}, "is not an ISO date"),
        ({"start_date": "2026-01-03", "end_date": "2026-01-01"}, "end_date 2026-01-01 is before"),
        ({"start_date": "2026-01-01"}, "start_date and end_date go together"),
        ({"start_date": "2024-01-01", "end_date": "2026-01-02"}, "over max_window_days=366"),
    ],
    ids=["unparsable", "not-a-date", "reversed", "half", "too-wide"],
)
def test_a_bad_window_stops_with_a_one_line_error(dbt_project, workspace, variables, message):
    write_days(workspace.landing, JAN, 2)
    assert build(dbt_project, 1, 2).success
    before = snapshot(workspace.warehouse, full=True)

    outcome = dbt_project.build(variables)

    assert not outcome.success
    assert message in outcome.message
    assert "\n" not in outcome.message
    assert snapshot(workspace.warehouse, full=True) == before


def test_no_compiled_model_or_macro_asks_the_clock(dbt_project, workspace):
    # GIVEN a built day (staging reads its file list from the built manifests table)
    write_days(workspace.landing, JAN, 1)
    assert build(dbt_project, 1, 1).success

    # WHEN every model and test is compiled for that window
    result = dbt_project.invoke(["compile", "--vars", json.dumps(window_vars(day(1), day(1)))])

    # THEN no compiled SQL and no macro refers to the clock; dbt's run_started_at is read
    # by one macro only, which renders it as a "when" (published_at, loaded_at), never a day
    assert result.success
    clock = re.compile(
        r"current_date|current_timestamp|now\(|today\(|get_current_time|(?<!refill_)run_started_at",
        re.I,
    )
    compiled = [r.node.compiled_code or "" for r in result.result.results]
    assert len(compiled) > 10
    assert [code for code in compiled if clock.search(code)] == []
    project = dbt_project.project_dir
    sources = [*project.glob("macros/**/*.sql"), *project.glob("models/**/*.sql")]
    # (and the plain run's run-log row says when it ended: a "when" too)
    assert sorted(p.name for p in sources if clock.search(p.read_text())) == [
        "refill_plain_run_log.sql",
        "refill_run_started_at.sql",
    ]
    # AND dbt's own clock, run_started_at, dates nothing: it is a timestamp (when something
    # was published), never cut to a day, in the sources or as a literal in compiled SQL
    run_day = datetime.now(UTC).date().isoformat()
    as_a_day = re.compile(
        r"run_started_at\s*(\.date\(\)|\.day\b|\.strftime\(\s*['\"]%Y-%m-%d['\"]\s*\)"
        r"|\|\s*string\s*\)?\s*\[\s*:\s*10\s*\])"
        rf"|'{run_day}'|'{run_day} [^']*'\s*::\s*date|'{run_day} [^']*'\s+as\s+date\b",
        re.I,
    )
    assert [p.name for p in sources if as_a_day.search(p.read_text())] == []
    assert [code for code in compiled if as_a_day.search(code)] == []


def test_the_dbt_unit_tests_pass(dbt_project, workspace):
    # dbt unit tests read the column types of their inputs from built relations
    write_days(workspace.landing, JAN, 1)
    assert build(dbt_project, 1, 1).success

    result = dbt_project.invoke(
        ["test", "--select", "test_type:unit", "--vars", json.dumps(window_vars(day(1), day(1)))]
    )

    assert result.success
    assert len(result.result.results) >= 5


def test_seeds_load_on_a_fresh_warehouse_then_only_when_their_content_changed(
    dbt_project, workspace, monkeypatch
):
    from flows.tasks import RunContext, prepare_warehouse
    from refill.warehouse import locking

    context = RunContext("test-seeds", "test", locking.HISTORY, False, None, 60)
    invoked: list[str] = []
    invoke = dbt_project.invoke
    monkeypatch.setattr(dbt_project, "invoke", lambda cmd: invoked.append(cmd[0]) or invoke(cmd))

    # GIVEN a fresh warehouse: the seeds are loaded and the ops relations created
    prepare_warehouse(dbt_project, context)
    assert invoked == ["seed"]
    assert query(workspace.warehouse, "select count(*) from ops.partition_ledger") == [(0,)]
    fx_rates = query(workspace.warehouse, "select count(*) from reference.fx_rates_daily")

    # WHEN the next run prepares it with the same seeds: nothing is reloaded
    prepare_warehouse(dbt_project, context)
    assert invoked == ["seed"]

    # WHEN a seed file's content changes (its sha256, whatever dbt's checksum says): it is
    # reloaded, once
    contents = dbt_project.seed_contents()
    with monkeypatch.context() as patch:
        changed = {**contents, "seed.refill.fx_rates_daily": "a corrected rate"}
        patch.setattr(dbt_project, "seed_contents", lambda: changed)
        prepare_warehouse(dbt_project, context)
        prepare_warehouse(dbt_project, context)
    assert invoked == ["seed", "seed"]

    # WHEN the seeds were loaded outside the flows (a plain `dbt seed`, no key): reloaded
    prepare_warehouse(dbt_project, context)
    assert dbt_project.invoke(["seed"]).success
    prepare_warehouse(dbt_project, context)
    assert invoked == ["seed", "seed", "seed", "seed", "seed"]
    assert query(workspace.warehouse, "select count(*) from reference.fx_rates_daily") == fx_rates


def test_code_versions_are_compiled_once_per_project_content(dbt_project, monkeypatch, tmp_path):
    from dbt.contracts.files import FileHash

    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "target"))
    monkeypatch.setattr(dbt_project, "_code_versions", None)
    compiles: list[int] = []
    compile_versions = dbt_project._compile_code_versions
    monkeypatch.setattr(
        dbt_project,
        "_compile_code_versions",
        lambda nodes, seeds: compiles.append(1) or compile_versions(nodes, seeds),
    )

    # GIVEN the versions computed once by dbt (the macro is their one home)
    versions = dbt_project.code_versions()
    assert len(compiles) == 1 and "fct_payments" in versions

    # WHEN a later command asks on the unchanged project: read from the target folder
    dbt_project._code_versions = None
    assert dbt_project.code_versions() == versions
    assert len(compiles) == 1

    # WHEN a model upstream of the marts changes (as a new parse would see it): recompiled
    # (a change of meaning: a version hashes the model's tokens, not its bytes)
    staging = dbt_project.manifest.nodes["model.refill.stg_payments__lines"]
    original = staging.checksum, staging.raw_code
    try:
        staging.raw_code = original[1] + "\nwhere line_number > 0"
        staging.checksum = FileHash.from_contents(staging.raw_code)
        dbt_project.manifest.build_flat_graph()
        dbt_project._code_versions = None
        changed = dbt_project.code_versions()
    finally:
        staging.checksum, staging.raw_code = original
        dbt_project.manifest.build_flat_graph()
    assert len(compiles) == 2
    assert changed["fct_payments"] != versions["fct_payments"]
