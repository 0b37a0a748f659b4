"""Property (reader): any window of days whose part files are any mix of kinds gives
exactly the oracle's published, duplicate and quarantined lines, whichever reader path
each file takes.

Kinds: plain, CRLF, a lone CR, a byte order mark, bytes that are not UTF-8, NUL, empty
lines, no final newline, empty files, a line over 1 MiB; one or many files a day, and half
the time every file of the window in one kind (a window of CRLF files once rendered
invalid SQL). The oracle is tests.helpers.expected_day, over bytes. Each example rebuilds
only the staging models (the readers and the classification) of its window, on one
warehouse whose seeds were loaded once.
"""

from __future__ import annotations

import json
import shutil
from decimal import Decimal

import pytest
from hypothesis import given

from refill.rules.window import window_vars
from refill.warehouse.dbt_runner import outcome_of
from tests.helpers import expected_day, query
from tests.properties.conftest import copy_warehouse
from tests.properties.landings import Window, land_window, windows

STAGING = "stg_payments__manifests stg_payments__raw_lines stg_payments__lines"


@pytest.fixture(scope="module")
def staging_area(tmp_path_factory, seeded_warehouse):
    """A landing folder and a warehouse with the seeds, for every example of the module."""
    root = tmp_path_factory.mktemp("reader")
    warehouse = copy_warehouse(seeded_warehouse, root / "warehouse" / "refill.duckdb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_LANDING", str(root / "landing"))
        patch.setenv("REFILL_WAREHOUSE", str(warehouse))
        yield root / "landing", warehouse


def classified(warehouse, window: Window) -> dict:
    """(day, line status) -> (lines, sum of amount) as staging classified the window."""
    rows = query(
        warehouse,
        "select landed_date, line_status, count(*), coalesce(sum(amount), 0) "
        "from staging.stg_payments__lines group by 1, 2",
    )
    return {(day, status): (lines, amount) for day, status, lines, amount in rows}


@given(window=windows())
def test_any_window_of_any_mix_of_file_kinds_reads_as_the_oracle_says(
    staging_area, dbt_project, window
):
    # GIVEN a window of days whose part files are of any kinds, each day ready
    landing, warehouse = staging_area
    shutil.rmtree(landing, ignore_errors=True)
    land_window(landing, window)
    variables = window_vars(window.dates[0], window.dates[-1])

    # WHEN its staging (readiness, both line readers, the classification) is built
    outcome = outcome_of(
        dbt_project.invoke(["run", "--vars", json.dumps(variables), "--select", STAGING])
    )

    # THEN it builds, and every day's lines are published, duplicate and quarantined as the
    # oracle says, with the published amounts it says
    assert outcome.success, f"{window.kinds}: {outcome.message}"
    found = classified(warehouse, window)
    for day in window.dates:
        truth = expected_day(landing, day)
        zero = (0, Decimal(0))
        assert (
            found.get((day, "published"), zero),
            found.get((day, "duplicate"), zero)[0],
            found.get((day, "quarantined"), zero)[0],
        ) == ((truth.published, truth.amount), truth.duplicates, truth.quarantined), (
            day,
            window.kinds,
        )
