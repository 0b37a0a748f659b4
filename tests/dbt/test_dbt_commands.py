"""dbt as dbt users run it: each command typed as in a terminal (`dbt ...` in a child
process) on a copy of the project with its own landing and warehouse, on a window.

A mart never reads another window's work tables: `show`, `retry` and the slim-CI state
selections either give the window's rows or refuse in one line, writing nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import pytest

from refill.rules.readiness import day_folder
from refill.rules.window import window_vars
from refill.sample_data import DATASET, write_days
from tests.helpers import (
    expected_day,
    patched_project,
    published_by_day,
    query,
    relation_exists,
    shown_rows,
    snapshot,
)

JAN = date(2026, 1, 1)
DBT = Path(sys.executable).with_name("dbt")


def day(n: int) -> date:
    return JAN + timedelta(days=n - 1)


def window(first: int, last: int) -> str:
    return json.dumps(window_vars(day(first), day(last)))


@dataclass
class Checkout:
    """A project copy, its landing and its warehouse: what a user's terminal holds."""

    project: Path
    landing: Path
    warehouse: Path

    @property
    def target(self) -> Path:
        return self.project / "target"

    def dbt(self, *args: str, ok: bool | None = None) -> subprocess.CompletedProcess:
        environment = {
            **os.environ,
            "REFILL_LANDING": str(self.landing),
            "REFILL_WAREHOUSE": str(self.warehouse),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            # the project copy is this test's own: its artifacts stay where a user finds
            # them (make test's workers set DBT_TARGET_PATH to a folder per worker)
            "DBT_TARGET_PATH": str(self.target),
        }
        environment.pop("DBT_TARGET", None)
        self.warehouse.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                str(DBT),
                *args,
                "--project-dir",
                str(self.project),
                "--profiles-dir",
                str(self.project),
            ],
            cwd=self.project,
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if ok is not None and (done.returncode == 0) != ok:
            raise AssertionError(
                f"dbt {' '.join(args)} exited {done.returncode}:\n{done.stdout[-4000:]}"
            )
        return done


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    from refill.warehouse.dbt_runner import DbtProject

    project = patched_project(DbtProject().project_dir, tmp_path / "project", {})
    landing = tmp_path / "landing"
    landing.mkdir()
    # a CI warehouse is not named refill.duckdb: nothing may depend on the file's name
    return Checkout(project, landing, tmp_path / "ci" / "ci.duckdb")


def expected_published(landing: Path, first: int, last: int) -> dict[date, tuple]:
    truths = {day(n): expected_day(landing, day(n)) for n in range(first, last + 1)}
    return {d: (t.published, t.amount) for d, t in truths.items() if t.published}


def test_show_of_an_earlier_window_shows_that_windows_rows(checkout):
    # GIVEN days 1-3 then 4-5 built: the staging work tables hold 4-5
    write_days(checkout.landing, JAN, 5)
    checkout.dbt("build", "--vars", window(1, 3), ok=True)
    checkout.dbt("build", "--vars", window(4, 5), ok=True)

    # WHEN a user shows fct_payments for the earlier window
    shown = checkout.dbt(
        "show",
        "--select",
        "fct_payments",
        "--vars",
        window(1, 3),
        "--limit",
        "100000",
        "--output",
        "json",
        "--log-format",
        "json",
        ok=True,
    )

    # THEN the rows are that window's, every published line of it, and no other day's
    rows = shown_rows(shown.stdout)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["event_date"][:10]] = counts.get(row["event_date"][:10], 0) + 1
    expected = expected_published(checkout.landing, 1, 3)
    assert counts == {d.isoformat(): count for d, (count, _) in expected.items()}


def test_retry_after_a_readiness_failure_that_was_fixed_publishes_the_window(checkout):
    # GIVEN a window build stopped by readiness: day 2's manifest is missing
    write_days(checkout.landing, JAN, 3)
    manifest = day_folder(checkout.landing, DATASET, day(2)) / "_SUCCESS"
    saved = manifest.read_bytes()
    manifest.unlink()
    failed = checkout.dbt("build", "--vars", window(1, 3), ok=False)
    assert "refill readiness" in failed.stdout

    # WHEN the export arrives and the user types `dbt retry`
    manifest.write_bytes(saved)
    retried = checkout.dbt("retry")

    # THEN the retry publishes the window as a fresh build would
    assert retried.returncode == 0, retried.stdout[-3000:]
    assert published_by_day(checkout.warehouse) == expected_published(checkout.landing, 1, 3)


def _production_state(checkout: Checkout, tmp_path: Path) -> Path:
    """The production manifest (from the unchanged code, its warehouse named refill.duckdb)."""
    prod = Checkout(checkout.project, checkout.landing, tmp_path / "prod" / "refill.duckdb")
    prod.dbt("parse", ok=True)
    state = tmp_path / "prod_artifacts"
    state.mkdir()
    shutil.copy2(checkout.target / "manifest.json", state / "manifest.json")
    return state


def _change_a_mart(project: Path) -> None:
    mart = project / "models" / "marts" / "payments" / "fct_payments.sql"
    mart.write_text(mart.read_text() + "\n-- a pull request's change\n")


def test_slim_ci_selects_only_what_a_pull_request_changed(checkout, tmp_path):
    state = _production_state(checkout, tmp_path)
    _change_a_mart(checkout.project)

    listed = checkout.dbt(
        "ls",
        "--select",
        "state:modified",
        "--state",
        str(state),
        "--resource-type",
        "model",
        "--resource-type",
        "source",
        "--output",
        "name",
        ok=True,
    )

    # a CI warehouse under another name than production's does not modify the sources
    names = [
        line.strip()
        for line in listed.stdout.splitlines()
        if line.strip() and " " not in line.strip()
    ]
    assert names == ["fct_payments"]


@pytest.mark.parametrize(
    "holds_the_window", [False, True], ids=["empty-ci-warehouse", "ci-warehouse-with-window"]
)
def test_slim_ci_builds_the_changed_mart_for_the_window(checkout, tmp_path, holds_the_window):
    write_days(checkout.landing, JAN, 5)
    state = _production_state(checkout, tmp_path)
    if holds_the_window:
        # the CI warehouse holds days 1-3 and then 4-5: staging holds 4-5
        checkout.dbt("build", "--vars", window(1, 3), ok=True)
        checkout.dbt("build", "--vars", window(4, 5), ok=True)
    else:
        checkout.dbt("seed", ok=True)
    _change_a_mart(checkout.project)

    built = checkout.dbt(
        "build", "--select", "state:modified+", "--state", str(state), "--vars", window(1, 3)
    )

    assert built.returncode == 0, built.stdout[-3000:]
    published = published_by_day(checkout.warehouse)
    assert {d: v for d, v in published.items() if d <= day(3)} == expected_published(
        checkout.landing, 1, 3
    )


def test_slim_ci_on_an_empty_warehouse_refuses_in_one_line_or_builds(checkout, tmp_path):
    # `state:modified+` on a warehouse without the seeds: one line naming what to load, nothing
    # written; `+state:modified+` builds the parents too and publishes the window
    write_days(checkout.landing, JAN, 2)
    state = _production_state(checkout, tmp_path)
    _change_a_mart(checkout.project)

    refused = checkout.dbt(
        "build", "--select", "state:modified+", "--state", str(state), "--vars", window(1, 2)
    )
    assert refused.returncode != 0
    assert (
        "which this warehouse has not loaded" in refused.stdout and "(dbt seed)" in refused.stdout
    )

    built = checkout.dbt(
        "build", "--select", "+state:modified+", "--state", str(state), "--vars", window(1, 2)
    )
    assert built.returncode == 0, built.stdout[-3000:]
    assert published_by_day(checkout.warehouse) == expected_published(checkout.landing, 1, 2)


def test_unit_tests_run_on_an_empty_warehouse(checkout):
    # a CI warehouse holds nothing yet: dbt's unit tests must not need the relations
    done = checkout.dbt("test", "--select", "resource_type:unit_test")
    assert done.returncode == 0, done.stdout[-3000:]


def test_a_mart_built_alone_publishes_its_window_not_the_work_tables_window(checkout):
    # GIVEN days 1-3 and 4-5 published, in that order: the staging work tables hold 4-5
    write_days(checkout.landing, JAN, 5)
    checkout.dbt("build", "--vars", window(1, 3), ok=True)
    checkout.dbt("build", "--vars", window(4, 5), ok=True)
    before = snapshot(checkout.warehouse)

    # WHEN fct_payments alone is rebuilt for 1-3, as a plain `dbt build --select` does
    checkout.dbt("build", "--select", "fct_payments", "--vars", window(1, 3), ok=True)

    # THEN it published days 1-3 from their own lines: the same warehouse
    assert snapshot(checkout.warehouse)["main.fct_payments"] == before["main.fct_payments"]


def test_a_var_typo_is_refused_naming_it_before_the_seeds_load(checkout):
    write_days(checkout.landing, JAN, 2)
    typo = json.dumps({"start": day(1).isoformat(), "end": day(2).isoformat()})

    refused = checkout.dbt("build", "--vars", typo)

    assert refused.returncode != 0
    assert "refill input: unknown var(s) end, start" in refused.stdout
    assert not relation_exists(checkout.warehouse, "reference", "fx_rates_daily")


def test_a_model_that_reads_a_work_table_it_names_on_a_depends_on_line_is_refused_in_one_line(
    checkout,
):
    write_days(checkout.landing, JAN, 2)
    checkout.dbt("build", "--vars", window(1, 2), ok=True)
    # GIVEN a new model that reads the manifests and also names them with ref() on a
    # `-- depends_on:` line, in any of ref()'s spellings: a line comment cannot hold the
    # window's computed rows
    for spelling in (
        "ref('stg_payments__manifests')",
        'ref( "refill", "stg_payments__manifests" )',
        "ref('refill','stg_payments__manifests')",
    ):
        (checkout.project / "models/days_landed.sql").write_text(
            "{{ config(materialized='view') }}\n"
            f"-- depends_on: {{{{ {spelling} }}}}\n"
            "select landed_date from {{ ref('stg_payments__manifests') }}\n"
        )

        # WHEN a user shows it for a window the work tables do not hold
        refused = checkout.dbt("show", "--select", "days_landed", "--vars", window(1, 1))

        # THEN one line names the model, the work table and the fix, and nothing is written
        assert refused.returncode != 0, spelling
        assert (
            "refill window: days_landed reads stg_payments__manifests and also names it on a "
            "`-- depends_on:` line" in refused.stdout
        ), (spelling, refused.stdout[-2000:])
        assert "refill_lineage_ref('stg_payments__manifests')" in refused.stdout
        assert not relation_exists(checkout.warehouse, "main", "days_landed")

    # AND named there through refill_lineage_ref, the same model shows the window's day
    (checkout.project / "models/days_landed.sql").write_text(
        "{{ config(materialized='view') }}\n"
        "-- depends_on: {{ refill_lineage_ref('stg_payments__manifests') }}\n"
        "select landed_date from {{ ref('stg_payments__manifests') }}\n"
    )
    shown = checkout.dbt(
        "show",
        "--select",
        "days_landed",
        "--vars",
        window(1, 1),
        "--output",
        "json",
        "--log-format",
        "json",
        ok=True,
    )
    assert shown_rows(shown.stdout) == [{"landed_date": str(day(1))}]


def _withdraw_manifest(checkout: Checkout, n: int) -> bytes:
    """Day n's _SUCCESS removed, as while its export is still running; returns its bytes."""
    manifest = day_folder(checkout.landing, DATASET, day(n)) / "_SUCCESS"
    saved = manifest.read_bytes()
    manifest.unlink()
    return saved


def _published_days(warehouse: Path) -> dict[str, list[date]]:
    rows = query(
        warehouse,
        "select model_name, partition_date from ops.partition_ledger"
        " where status = 'published' order by 1, 2",
    )
    days: dict[str, list[date]] = {}
    for model_name, partition_date in rows:
        days.setdefault(model_name, []).append(partition_date)
    return days


def test_compile_and_docs_generate_need_no_ready_day_nor_a_loaded_warehouse(checkout):
    # GIVEN a landing whose day 2 is still exporting, and an empty warehouse (a CI runner
    # making slim-CI artifacts with `dbt compile --target prod`)
    write_days(checkout.landing, JAN, 3)
    _withdraw_manifest(checkout, 2)

    # WHEN a user compiles the project and generates its docs
    compiled = checkout.dbt("compile")
    documented = checkout.dbt("docs", "generate")

    # THEN both render every model, reading no landed day and no seed
    assert compiled.returncode == 0, compiled.stdout[-3000:]
    assert documented.returncode == 0, documented.stdout[-3000:]
    rendered = (
        checkout.target / "compiled/refill/models/staging/payments/stg_payments__manifests.sql"
    )
    assert "refill_window_readiness(" in rendered.read_text()
    assert (checkout.target / "catalog.json").exists()
    assert not relation_exists(checkout.warehouse, "reference", "fx_rates_daily")


def test_a_full_refresh_with_a_day_not_ready_publishes_the_ready_days_and_names_the_other(checkout):
    # GIVEN four landed days, day 3 still exporting, on an empty warehouse
    write_days(checkout.landing, JAN, 4)
    saved = _withdraw_manifest(checkout, 3)

    # WHEN a user rebuilds everything with a full refresh
    refreshed = checkout.dbt("build", "--full-refresh")

    # THEN the ready days are published, day 3 is named and left unpublished
    assert refreshed.returncode == 0, refreshed.stdout[-3000:]
    named = f"left out of this run (every landed day, no window given), unpublished: {day(3)}"
    assert named in refreshed.stdout
    expected = expected_published(checkout.landing, 1, 4)
    del expected[day(3)]
    assert published_by_day(checkout.warehouse) == expected
    marts = ("fct_daily_revenue_v1", "fct_daily_revenue_v2", "fct_payments", "payments_quarantine")
    assert _published_days(checkout.warehouse) == {mart: [day(1), day(2), day(4)] for mart in marts}

    # AND once day 3 has landed and is published, a full refresh while it is exporting again
    # would drop it: refused naming it, before anything is written, unless allowed
    (day_folder(checkout.landing, DATASET, day(3)) / "_SUCCESS").write_bytes(saved)
    checkout.dbt("build", "--vars", window(3, 3), ok=True)
    before = snapshot(checkout.warehouse)
    _withdraw_manifest(checkout, 3)
    refused = checkout.dbt("build", "--full-refresh")
    assert refused.returncode != 0
    assert (
        f"--full-refresh would drop 1 published day(s) that are not ready now ({day(3)})"
        in refused.stdout
    )
    assert snapshot(checkout.warehouse) == before


def test_a_window_with_a_day_not_ready_is_refused_once_before_any_node_runs(checkout):
    # GIVEN a window whose day 2 is still exporting, on an empty warehouse
    write_days(checkout.landing, JAN, 3)
    _withdraw_manifest(checkout, 2)
    refusal = f"refill readiness: 1 day(s) of payments not ready, nothing written: {day(2)}"

    for command in (("build",), ("test",)):
        # WHEN a user builds or tests the window
        done = checkout.dbt(*command, "--vars", window(1, 3))

        # THEN one refusal names the day, and no node ran: no seed loaded, no table built
        assert done.returncode != 0, command
        assert done.stdout.count(refusal) == 1, (command, done.stdout[-3000:])
        assert " START sql " not in done.stdout and " START seed " not in done.stdout, command
        assert not relation_exists(checkout.warehouse, "reference", "fx_rates_daily"), command

    # AND a full refresh given a window is refused before any node runs
    refreshed = checkout.dbt("build", "--full-refresh", "--vars", window(1, 1))
    assert refreshed.returncode != 0
    assert "refill window: --full-refresh rebuilds every landed day" in refreshed.stdout
    assert " START seed " not in refreshed.stdout
    assert not relation_exists(checkout.warehouse, "reference", "fx_rates_daily")


def _change_a_version(project: Path) -> None:
    mart = project / "models" / "marts" / "revenue" / "fct_daily_revenue_v2.sql"
    mart.write_text(mart.read_text() + "\n-- a pull request's change\n")


def test_slim_ci_of_a_mart_built_from_another_mart_on_an_empty_warehouse(checkout, tmp_path):
    # GIVEN production's artifacts and a change to fct_daily_revenue_v2, which reads fct_payments
    write_days(checkout.landing, JAN, 2)
    state = _production_state(checkout, tmp_path)
    _change_a_version(checkout.project)
    slim = ("build", "--state", str(state), "--vars", window(1, 2))

    # WHEN the change alone is built on an empty CI warehouse, or deferred to production
    alone = checkout.dbt(*slim, "--select", "state:modified+")
    deferred = checkout.dbt(*slim, "--select", "state:modified+", "--defer")
    # or with its parents, dbt adding a test of a model outside the selection
    eager = checkout.dbt(*slim, "--select", "+state:modified+")

    # THEN each is refused in one line saying what to do, before any node runs
    assert alone.returncode != 0
    assert (
        "refill input: fct_daily_revenue_v2 reads fct_payments, which this warehouse has not "
        "published and this command does not build" in alone.stdout
    ), alone.stdout[-3000:]
    assert deferred.returncode != 0
    assert "refill input: --defer is not supported" in deferred.stdout, deferred.stdout[-3000:]
    assert eager.returncode != 0
    assert "payments_quarantine, which this warehouse does not hold" in eager.stdout, eager.stdout[
        -3000:
    ]
    assert "--indirect-selection buildable" in eager.stdout
    for refused in (alone, deferred, eager):
        assert " START seed " not in refused.stdout
    assert not relation_exists(checkout.warehouse, "reference", "fx_rates_daily")

    # AND the documented slim CI builds the change with its parents and publishes the window
    built = checkout.dbt(*slim, "--select", "+state:modified+", "--indirect-selection", "buildable")
    assert built.returncode == 0, built.stdout[-3000:]
    assert _published_days(checkout.warehouse)["fct_daily_revenue_v2"] == [day(1), day(2)]
