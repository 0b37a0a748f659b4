"""A second landing dataset takes SQL and YAML only: a copy of the project with a small
`refunds` dataset (its landing, staging and one partitioned fact model, declared to refill
by `meta: {refill: ...}`) is backfilled, shown by `refill status` and `refill gaps` and
drawn by the board with no change to the Python side."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import date, timedelta
from pathlib import Path

import pytest

from harness.overlay import copy_project
from refill import settings
from refill.cli import EXIT_FAILURE, EXIT_OK, main
from refill.rules.window import window_vars
from refill.sample_data import DaySpec, write_day, write_landed_day
from refill.warehouse.dbt_runner import shared_project
from tests.helpers import query, shown_rows

pytestmark = pytest.mark.usefixtures("prefect_harness")

D1 = date(2026, 2, 1)
DAYS = [D1 + timedelta(days=n) for n in range(3)]

REFUNDS_SOURCES = """
version: 2

sources:
  - name: refunds
    description: The refunds landing, read through the readiness gate like payments'.
    tables:
      - name: manifests
        description: "`$REFILL_LANDING/refunds/dt=YYYY-MM-DD/_SUCCESS`"
      - name: part_files
        description: "`$REFILL_LANDING/refunds/dt=YYYY-MM-DD/part-NNNN.jsonl`"
"""

FCT_REFUNDS = """
{{
    config(
        partition_column='refund_date',
        post_hook=[
            "{{ refill_audit_unique_in_window(['refund_id', 'refund_date']) }}",
            "{{ refill_record_partitions(manifests_model='stg_refunds__manifests') }}",
        ],
    )
}}
-- depends_on: {{ refill_lineage_ref('stg_refunds__manifests') }}

select
    json_extract_string(line_text, '$.refund_id') as refund_id,
    landed_date as refund_date,
    cast(json_extract_string(line_text, '$.refunded_at') as timestamp) as refunded_at,
    cast(json_extract(line_text, '$.amount_usd') as decimal(18, 2)) as amount_usd,
    {{ refill_string_literal(refill_run_id()) }} as _run_id
from {{ ref('stg_refunds__raw_lines') }}
where {{ refill_window_predicate('landed_date') }}
"""

REFUNDS_MODELS = """
version: 2

models:
  - name: fct_refunds
    description: One row per refund and day.
    config:
      meta:
        refill: {dataset: refunds, role: facts, totals: amount_usd, hours: refunded_at}
"""


def refunds_project(root: Path) -> Path:
    """The product's project with a refunds dataset added: YAML and SQL only. Its staging is
    payments' readiness gate and line reader with the dataset's name changed."""
    project = root / "project"
    copy_project(settings.PACKAGE_PROJECT_DIR, project)
    staging, marts = project / "models/staging/refunds", project / "models/marts/refunds"
    staging.mkdir(parents=True)
    marts.mkdir(parents=True)
    for name in ("manifests", "raw_lines"):
        sql = (project / f"models/staging/payments/stg_payments__{name}.sql").read_text()
        (staging / f"stg_refunds__{name}.sql").write_text(
            sql.replace("stg_payments__", "stg_refunds__").replace("payments", "refunds")
        )
    (staging / "_refunds__sources.yml").write_text(textwrap.dedent(REFUNDS_SOURCES))
    (marts / "fct_refunds.sql").write_text(textwrap.dedent(FCT_REFUNDS).lstrip())
    (marts / "_refunds__models.yml").write_text(textwrap.dedent(REFUNDS_MODELS))
    return project


def refund_lines(day: date, count: int) -> list[str]:
    return [
        json.dumps(
            {
                "refund_id": f"rf-{day:%Y%m%d}-{n}",
                "refunded_at": f"{day}T{(n * 7) % 24:02d}:15:00Z",
                "amount_usd": 5 + n,
            }
        )
        for n in range(count)
    ]


@pytest.fixture
def refunds_workspace(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv(settings.PROJECT_DIR_ENV, str(refunds_project(tmp_path)))
    shared_project.cache_clear()  # this process's project is the copy, for the test
    yield workspace
    shared_project.cache_clear()


def test_a_second_dataset_is_backfilled_shown_and_drawn_with_no_python_change(
    refunds_workspace, tmp_path, capsys
):
    workspace = refunds_workspace
    # GIVEN three days of payments; refunds landed for the first two, not the third
    for day in DAYS:
        write_day(workspace.landing, day, DaySpec(payments=40))
    for n, day in enumerate(DAYS[:2]):
        write_landed_day(workspace.landing, day, [refund_lines(day, 3 + n)], dataset="refunds")
    catalog = shared_project().catalog
    assert catalog.names == ("payments", "refunds")
    window = ["--start", str(DAYS[0]), "--end", str(DAYS[-1])]

    # WHEN the range is backfilled, skipping what is not ready
    status = main(["backfill", *window, "--on-missing", "skip"])
    output = capsys.readouterr().out

    # THEN readiness was checked for the refunds' days: the third day waits for its refunds
    assert status == EXIT_OK, output
    # and the ready days' refunds partitions are published and ledgered
    ledger = query(
        workspace.warehouse,
        "select partition_date, rows_written, source_records from ops.partition_ledger "
        "where model_name = 'fct_refunds' order by 1",
    )
    assert ledger == [(DAYS[0], 3, 3), (DAYS[1], 4, 4)]
    assert query(workspace.warehouse, "select count(*) from main.fct_refunds") == [(7,)]

    # status lists the refunds per day, and the third day as not ready for its refunds
    assert main(["status", *window]) == EXIT_OK
    table = capsys.readouterr().out
    assert "refunds rows / lines" in table
    lines = {line.split()[0]: line for line in table.splitlines() if line[:4] == "2026"}
    assert "3 / 3" in lines[str(DAYS[0])] and "4 / 4" in lines[str(DAYS[1])]
    assert "refunds: no landing folder" in lines[str(DAYS[2])]
    assert "fct_refunds complete through" in table

    # gaps: nothing to fix on the ready days; the third is listed as not ready
    assert main(["gaps", *window]) == EXIT_OK
    assert f"not ready (cannot be fixed yet): {DAYS[2]}" in capsys.readouterr().out

    # WHEN the refunds of the third day land: it is a gap, and the backfill fills it
    write_landed_day(workspace.landing, DAYS[2], [refund_lines(DAYS[2], 2)], dataset="refunds")
    assert main(["gaps", *window]) == EXIT_FAILURE
    assert f"{DAYS[2]}  missing" in capsys.readouterr().out
    assert main(["backfill", *window]) == EXIT_OK
    assert query(
        workspace.warehouse,
        "select rows_written from ops.partition_ledger "
        f"where model_name = 'fct_refunds' and partition_date = '{DAYS[2]}'",
    ) == [(2,)]
    capsys.readouterr()

    # AND a re-export of one dataset's day makes that day stale, the other's untouched days not
    write_landed_day(workspace.landing, DAYS[0], [refund_lines(DAYS[0], 5)], dataset="refunds")
    assert main(["gaps", *window]) == EXIT_FAILURE
    gaps = capsys.readouterr().out
    assert f"{DAYS[0]}  stale" in gaps and str(DAYS[1]) not in gaps

    # AND the board draws the days, with the refunds model among what is published
    out = tmp_path / "board.html"
    assert main(["board", *window, "--out", str(out)]) == EXIT_OK
    html = out.read_text()
    assert all(str(day) in html for day in DAYS)
    assert "fct_refunds" in html

    # AND a plain `dbt show` of one earlier day's refunds shows that day's refunds: the
    # dataset's staging work tables hold the last backfill's day, so the show reads its
    # gate and lines computed from the landing, as payments' do
    project = Path(os.environ[settings.PROJECT_DIR_ENV])
    shown = subprocess.run(
        [
            str(Path(sys.executable).with_name("dbt")),
            *("show", "--select", "fct_refunds", "--output", "json", "--log-format", "json"),
            *("--vars", json.dumps(window_vars(DAYS[1], DAYS[1]))),
            *("--project-dir", str(project), "--profiles-dir", str(project)),
        ],
        cwd=project,
        env={**os.environ, "DBT_TARGET_PATH": str(tmp_path / "target")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert shown.returncode == 0, shown.stdout[-3000:]
    assert sorted(row["refund_id"] for row in shown_rows(shown.stdout)) == [
        f"rf-{DAYS[1]:%Y%m%d}-{n}" for n in range(4)
    ]
