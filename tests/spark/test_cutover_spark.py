"""`refill cutover` on the Spark cluster: the same checks, refusals and report as on DuckDB,
and a switch made by one appended pointer row (docs/cutover.md, "On Spark").

One warehouse for the whole story (each Spark build costs a minute or two here): three
days of v1 and v2 built, with v2 missing a day at first; then a switch, a rollback, and a
switch killed right after its commit point."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from refill.cli import cutover as cutover_module
from refill.errors import RefillError
from refill.rules.window import window_vars
from refill.sample_data import write_days
from refill.warehouse import board_reads
from refill.warehouse.dbt_runner import outcome_of
from refill.warehouse.spark_engine import SparkConnection
from refill.warehouse.spark_thrift import SparkClusterWarehouse
from tests.spark.test_spark_pipeline import JAN, SPEC, build, day

pytestmark = pytest.mark.spark

MODEL = "fct_daily_revenue"
ORDER = " order by event_date, market"


def switch(to: int | None = None, rollback: bool = False, dry_run: bool = False):
    flags = ["--rollback"] if rollback else ["--to", str(to)]
    flags += ["--dry-run"] if dry_run else ["--yes"]
    return cutover_module.cutover(
        MODEL,
        to_version=to,
        rollback=rollback,
        yes=not dry_run,
        dry_run=dry_run,
        command_line=" ".join(["refill", "cutover", MODEL, *flags]),
    )


def served(workspace) -> list[tuple]:
    """What readers of the consumer view get."""
    return workspace.rows(f"select * from main.{MODEL}{ORDER}")


def version_rows(workspace, version: int) -> list[tuple]:
    return workspace.rows(f"select * from main.{MODEL}_v{version}{ORDER}")


def pointer_log(workspace) -> list[tuple]:
    return workspace.rows(
        "select current_version, previous_version from ops.version_pointer"
        f" where model_name = '{MODEL}' order by switched_at",
    )


def moves(workspace) -> list[tuple]:
    """The history of the pointer's moves made by a cutover (not the first build's)."""
    return workspace.rows(
        "select from_version, to_version, command from ops.version_switches"
        f" where model_name = '{MODEL}' and from_version is not null order by switched_at",
    )


def compared(report) -> dict:
    """The report as readers see it, without where it was made."""
    fields = asdict(report)
    shown = ("action", "from_version", "to_version", "totals", "days_compared", "days_changed")
    return {key: fields[key] for key in (*shown, "largest_changes")}


def test_a_cutover_on_spark_checks_reports_switches_and_rolls_back_like_duckdb(
    cluster_dbt, cluster_workspace, dbt_project, tmp_path, monkeypatch
):
    spark_dbt, workspace = cluster_dbt, cluster_workspace
    # GIVEN three landed days; on Spark days 1-2 built whole, day 3 built without v2
    write_days(cluster_workspace.landing, JAN, 3, SPEC)
    assert build(spark_dbt, 1, 2).success
    command = ["build", "--vars", json.dumps(window_vars(day(3), day(3))), "--no-write-json"]
    command += ["--exclude-resource-type", "unit_test", "--exclude-resource-type", "test"]
    outcome = outcome_of(spark_dbt.invoke([*command, "--exclude", f"{MODEL}_v2"]))
    assert outcome.success, outcome.message
    monkeypatch.setattr(cutover_module, "shared_project", lambda: spark_dbt)
    v1_served = served(workspace)
    assert v1_served == version_rows(workspace, 1) and v1_served  # a fresh warehouse serves v1

    # WHEN the cutover to v2 is asked for
    with pytest.raises(RefillError) as refused:
        switch(to=2)

    # THEN it is refused naming the day v2 lacks and the command that fills it; nothing moved
    assert str(refused.value) == (
        "cutover refused: fct_daily_revenue_v2 is not published for 1 day(s) that v1 serves "
        "(2026-01-03); fill them first: refill backfill --start 2026-01-03 --end 2026-01-03 "
        "--select fct_daily_revenue_v2"
    )
    assert pointer_log(workspace) == [(1, None)]
    assert served(workspace) == v1_served

    # WHEN v2 is filled for day 3, and the dry run asked on Spark and, on the same landing,
    # on DuckDB
    outcome = build(spark_dbt, 3, 3, select=f"{MODEL}_v2")
    assert outcome.success, outcome.message
    on_spark = switch(to=2, dry_run=True)

    monkeypatch.delenv("DBT_TARGET")
    monkeypatch.setattr(cutover_module, "shared_project", lambda: dbt_project)
    monkeypatch.setenv("REFILL_WAREHOUSE", str(tmp_path / "duckdb" / "refill.duckdb"))
    assert dbt_project.build(window_vars(day(1), day(3))).success
    on_duckdb = switch(to=2, dry_run=True)
    monkeypatch.setenv("DBT_TARGET", "spark-cluster")
    monkeypatch.setattr(cutover_module, "shared_project", lambda: spark_dbt)

    # THEN both engines report the same changes per market and day (one diff engine), and
    # the dry run switched nothing
    assert on_spark.days_changed == [day(1), day(2), day(3)]
    assert compared(on_spark) == compared(on_duckdb)
    assert not on_spark.switched
    assert pointer_log(workspace) == [(1, None)]

    # WHEN the cutover is made
    made = switch(to=2)

    # THEN one pointer row was appended, readers get v2's rows exactly, and the history
    # records the move with its command
    assert made.switched
    assert pointer_log(workspace) == [(1, None), (2, 1)]
    assert served(workspace) == version_rows(workspace, 2) != v1_served
    assert moves(workspace) == [(1, 2, "refill cutover fct_daily_revenue --to 2 --yes")]

    # WHEN it is rolled back
    switch(rollback=True)

    # THEN readers get v1 again, and the pointer's log holds both moves
    assert served(workspace) == v1_served
    assert pointer_log(workspace) == [(1, None), (2, 1), (1, 2)]
    # and the board reads the mart as readers get it: once, served v1 since the rollback,
    # with each version's totals per day
    reader = SparkClusterWarehouse(cluster_workspace.locks).open(read_only=True, wait_seconds=0)
    declared = spark_dbt.catalog.versioned
    (mart,) = board_reads.read_versioned_marts(reader, day(1), day(3), declared)
    reader.close()
    headline = declared[0].measures[0]
    assert (mart.name, mart.served, mart.previous, mart.measure) == (MODEL, 1, 2, headline)
    for version in (1, 2):
        per_day = f"select event_date, sum(revenue_usd) from main.{MODEL}_v{version} group by 1"
        assert mart.totals[version] == dict(workspace.rows(per_day)), version
        assert mart.published_days[version] == 3

    # WHEN a cutover to v2 stops right after its pointer row, before the history row and
    # the view are made (the process killed there)
    class Killed(BaseException):
        pass

    def killed_after_the_pointer_row(connection, sql, parameters=None):
        if sql.startswith("insert into ops.version_switches"):
            raise Killed
        return execute(connection, sql, parameters)

    execute = SparkConnection.execute
    monkeypatch.setattr(SparkConnection, "execute", killed_after_the_pointer_row)
    with pytest.raises(Killed):
        switch(to=2)
    monkeypatch.setattr(SparkConnection, "execute", execute)

    # THEN the switch is made: readers of the view (made before, never re-created) get v2,
    # the pointer's log holds the move; and the next cutover starts from v2
    assert served(workspace) == version_rows(workspace, 2)
    assert pointer_log(workspace)[-1] == (2, 1)
    assert len(moves(workspace)) == 2  # its history row was never written
    assert switch(rollback=True, dry_run=True).from_version == 2
