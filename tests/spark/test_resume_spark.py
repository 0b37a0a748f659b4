"""A newest-first `refill backfill` on Spark whose second chunk fails on real input resumes
only that chunk when the same command runs again.

The failure is input, not a switch: while the first chunk (the two newest days) builds, the
export of the oldest day is withdrawn (its `_SUCCESS` taken away, as an exporter can), so
the chunk over it fails at readiness when refill records the window's verdicts. The export
then lands again (the same bytes) and the user reruns the same command.

The scenario is the harness's Spark subset's own (harness/spark_scenarios.py), so the same
two `refill` processes also give the harness's Spark invariants over both warehouses.
Expected figures come from the files (tests/helpers.py expected_day), the warehouse is read
through the harness's Spark reader and, independently, with DuckDB's parquet reader.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("pyspark")

from harness import spark  # noqa: E402
from harness.spark_scenarios import days, failed_chunk_then_resume  # noqa: E402
from tests.helpers import expected_day  # noqa: E402

CHUNK_MODELS = (
    "fct_payments",
    "payments_quarantine",
    "fct_daily_revenue_v1",
    "fct_daily_revenue_v2",
)


def parquet_days(warehouse: Path, table: str, column: str) -> dict:
    """Per day, the rows of `main.<table>` read from Spark's files with DuckDB."""
    files = warehouse / "main.db" / table
    if not any(files.rglob("*.parquet")):
        return {}
    with duckdb.connect() as connection:
        return dict(
            connection.execute(
                f"select cast({column} as date), count(*) from read_parquet("
                f"'{files}/**/*.parquet', hive_partitioning = true) group by 1"
            ).fetchall()
        )


@pytest.fixture(scope="module")
def resumed(cluster, prefect_api, tmp_path_factory):
    """The scenario's events, on the Spark tests' one cluster, its `refill` processes on the
    session's Prefect server (the scenario's commands inherit this environment)."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in prefect_api.items():
            patch.setenv(key, value)
        return failed_chunk_then_resume(tmp_path_factory.mktemp("spark-resume"), cluster, say=print)


@pytest.fixture
def reading(resumed, monkeypatch):
    """This process pointed at the scenario's cluster."""
    for key, value in resumed.cluster.environment().items():
        monkeypatch.setenv(key, value)
    return resumed


def test_a_failed_chunk_fails_the_command_naming_it_and_leaves_its_days_unpublished(resumed):
    _, failed, _ = resumed.events
    day1, day2, day3, day4 = days()
    landing = resumed.landing
    # THEN the command failed, naming the chunk and what failed
    assert failed.code == 1, failed.output[-3000:]
    assert re.search(rf"chunk {day1}\.\.{day2} failed at readiness", failed.output), failed.output[
        -3000:
    ]
    # AND the newest chunk, built first, published exactly the source
    state = failed.state
    for day in (day3, day4):
        truth = expected_day(landing, day)
        assert state.facts[day] == (truth.published, truth.amount), day
        assert state.quarantine.get(day, 0) == truth.quarantined, day
    # AND the failed chunk's days have no ledger row and no row in any published table
    assert sorted({entry.partition_date for entry in state.ledger}) == [day3, day4]
    for model in CHUNK_MODELS:
        assert day1 not in state.table_rows.get(model, {}), model
        assert day2 not in state.table_rows.get(model, {}), model
    assert failed.violations == []


def test_the_same_command_again_builds_only_the_failed_chunk_and_equals_the_source(reading):
    resumed = reading
    _, failed, again = resumed.events
    day1, day2, day3, day4 = days()
    assert again.code == 0, again.output[-3000:]
    # THEN its summary says two days published, two skipped
    assert re.search(r"published 2 day\(s\), skipped 2", again.output), again.output[-2000:]
    # AND its attempts are the failed chunk's only; the first run's were both chunks
    attempts = spark.read_attempts(resumed.warehouse, resumed.tables)
    runs = list(dict.fromkeys(run_id for run_id, *_ in attempts))
    assert len(runs) == 2, attempts
    chunks_of = {
        run: [
            (start, end, outcome) for run_id, start, end, _, outcome, _ in attempts if run_id == run
        ]
        for run in runs
    }
    assert chunks_of[runs[0]] == [(day3, day4, "published"), (day1, day2, "failed")]
    assert chunks_of[runs[1]] == [(day1, day2, "published")]
    # AND the days published before kept their ledger rows (run ids)
    before = {(e.model_name, e.partition_date): e.run_id for e in failed.state.ledger}
    after = {(e.model_name, e.partition_date): e.run_id for e in again.state.ledger}
    assert {key: after[key] for key in before} == before
    # AND the warehouse equals the source, every day, in every model's ledger
    for day in days():
        truth = expected_day(resumed.landing, day)
        assert again.state.facts[day] == (truth.published, truth.amount), day
        assert again.state.quarantine.get(day, 0) == truth.quarantined, day
    # (read again from the files, without Spark)
    assert parquet_days(resumed.tables, "fct_payments", "event_date") == {
        day: expected_day(resumed.landing, day).published for day in days()
    }
    assert {(model, day) for model, day in after} == {
        (model, day) for model in CHUNK_MODELS for day in days()
    }


def test_the_harness_spark_invariants_hold_after_the_failure_and_the_resume(resumed):
    # the checker read each warehouse and found nothing (its power: test_harness_spark.py)
    assert [event.violations for event in resumed.events] == [[], [], []]
    assert all(event.state is not None for event in resumed.events[1:])
