"""The harness's Spark subset (harness/spark.py, harness/spark_scenarios.py): its invariants
hold after a backfill stopped by Ctrl-C, the same command SIGKILLed and its rerun, and its
reader catches a warehouse that breaks them, so the check cannot pass by reading nothing.

The subset's other scenario (a failed chunk, then the same command resuming it) runs in
tests/spark/test_resume_spark.py, which asserts its 0 violations too; `python -m harness.run
--engine spark` runs both.
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from harness import spark  # noqa: E402
from harness.invariants import CheckContext, Truths  # noqa: E402
from harness.spark_scenarios import days, run_spark_subset  # noqa: E402


@pytest.fixture(scope="module")
def subset(cluster, prefect_api, tmp_path_factory):
    """The subset's signal scenario, on the Spark tests' one cluster, its `refill` processes
    on the session's Prefect server (the scenario's commands inherit this environment)."""
    workdir = tmp_path_factory.mktemp("spark-harness")
    lines: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        for key, value in prefect_api.items():
            patch.setenv(key, value)
        stats = run_spark_subset(
            ["interrupted_then_killed_then_rerun"], workdir, lines.append, cluster
        )
    return stats, workdir / "interrupted_then_killed_then_rerun", lines, cluster


def test_the_spark_subset_reports_0_violations_after_a_ctrl_c_a_kill_and_a_rerun(subset):
    stats, _, lines, _ = subset
    print("\n".join(lines))
    # interrupted_run_stops among them: exit 130 within the grace, the run logged
    # 'interrupted', and no chunk after the one the Ctrl-C landed in
    assert "interrupted_run_stops" in spark.SPARK_INVARIANTS
    assert [finding.lines() for finding in stats.violations] == []
    # both signals landed in the command's work (not after it ended): the Ctrl-C stopped
    # the first run, the SIGKILL the second, and the third succeeded
    assert stats.kills == 2, lines
    assert stats.outcomes == {"interrupted": 1, "killed": 1, "succeeded": 1}, lines
    assert stats.checks == 3


def _truths(landing: Path) -> Truths:
    truths = Truths(landing)
    for day in days():
        truths.record(day)
    return truths


def _tables(cluster) -> Path:
    return Path(cluster.state) / "warehouse"


def _copy(cluster, tmp_path: Path) -> Path:
    """The cluster's tables' files, copied: what the checker reads, to break."""
    copy = tmp_path / "tables"
    shutil.copytree(_tables(cluster), copy)
    return copy


@pytest.fixture
def reading(subset, monkeypatch):
    """This process pointed at the subset's cluster, as the checker reads it."""
    for key, value in subset[3].environment().items():
        monkeypatch.setenv(key, value)
    return subset


def test_the_spark_reader_sees_the_published_warehouse_it_checks(reading):
    _, folder, _, cluster = reading
    state = spark.read_spark_state(folder / "warehouse", _tables(cluster))
    # every day in every chunk model and its ledger: a reader that read nothing fails here
    assert sorted(state.facts) == days()
    # the three runs' logs: the Ctrl-C's closed as interrupted, the SIGKILLed one left open
    # (no process was left to close it), the rerun's succeeded
    assert sorted(state.run_outcomes.values()) == ["interrupted", "running", "succeeded"]
    assert {(entry.model_name, entry.partition_date) for entry in state.ledger} >= {
        ("fct_payments", day) for day in days()
    }
    assert spark.check_spark(state, _truths(folder / "landing"), CheckContext(before=state)) == []


def test_the_spark_checker_catches_a_ledger_row_claiming_a_day_without_rows(reading, tmp_path):
    _, folder, _, cluster = reading
    copy = _copy(cluster, tmp_path)
    # GIVEN a copy whose ledger claims fct_payments for the day before the landing: the
    # first day's ledger file, placed under another day's partition folder
    ledger = copy / "ops.db" / "partition_ledger" / "model_name=fct_payments"
    day_before = days()[0] - timedelta(days=1)
    shutil.copytree(ledger / f"partition_date={days()[0]}", ledger / f"partition_date={day_before}")

    state = spark.read_spark_state(folder / "warehouse", copy)
    found = spark.check_spark(state, _truths(folder / "landing"), CheckContext(before=state))

    caught = {(violation.invariant, violation.detail.split(":")[0]) for violation in found}
    assert ("ledger_never_claims_more", f"fct_payments {day_before}") in caught, found
    assert ("reconciles_at_fingerprint", f"fct_payments {day_before}") in caught, found


def test_the_spark_checker_catches_a_day_published_twice(reading, tmp_path):
    _, folder, _, cluster = reading
    copy = _copy(cluster, tmp_path)
    # GIVEN a copy where one day of fct_payments holds its rows twice (a replace that appended)
    day_folder = copy / "main.db" / "fct_payments" / f"event_date={days()[1]}"
    for part in list(day_folder.glob("*.parquet")):
        shutil.copy(part, part.with_name("appended-" + part.name))

    state = spark.read_spark_state(folder / "warehouse", copy)
    found = spark.check_spark(state, _truths(folder / "landing"), CheckContext(before=state))

    assert {violation.invariant for violation in found} >= {
        "unique_transaction_id",
        "ledger_never_claims_more",
        "reconciles_at_fingerprint",
    }, found
