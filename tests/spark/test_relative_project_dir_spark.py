"""The Spark targets driven as CI and orchestrators run dbt: `dbt ... --project-dir
<relative> --profiles-dir <relative>` from another working directory, through a shell
(issue 34, finding 15). The engine runs the reference and readiness rules in a folder of
Spark's (on a cluster, in its own process), not dbt's: before, the seed files reached it as
dbt's relative paths and every window failed in stg_payments__manifests (`[Errno 2] No such
file or directory: '.../seeds/fx_rates_daily.csv'`), and a relative landing named nothing.

One cold dbt build (its JVM), one day, dbt's unit and data tests left out; the published
files are read with DuckDB, so no test here starts a Spark of its own. The paths each target
hands the engine are read without an engine: a macro that only renders them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import duckdb
import pytest

from refill.sample_data import write_days
from tests.dbt.test_relative_project_dir import (
    DAY,
    DBT,
    RELATIVE,
    SPEC,
    plain_build,
    project_copy,
)
from tests.helpers import expected_day

pytestmark = pytest.mark.spark


def table_rows(warehouse, relation: str, sql: str) -> list[tuple]:
    """`sql` over `relation` (schema.table) as Spark wrote it: its parquet folder."""
    schema, table = relation.split(".")
    files = str(warehouse / f"{schema}.db" / table / "**" / "*.parquet")
    with duckdb.connect() as connection:
        connection.execute(
            f"create view t as select * from read_parquet('{files}', hive_partitioning = true)"
        )
        return connection.execute(sql).fetchall()


def test_a_plain_build_with_a_relative_project_dir_publishes_on_the_session_target(tmp_path):
    # GIVEN a landed day and a project copy at a relative path under the working directory
    working, project = project_copy(tmp_path)
    landing = tmp_path / "landing"
    write_days(landing, DAY, 1, SPEC)
    warehouse = tmp_path / "spark-warehouse"

    # WHEN it is built with plain dbt on the `spark` target, the project dir relative
    done = plain_build(
        working,
        {
            "DBT_TARGET": "spark",
            "REFILL_LANDING": str(landing),
            "REFILL_SPARK_WAREHOUSE": str(warehouse),
            "PYSPARK_PYTHON": sys.executable,  # the engine's tasks' Python imports refill
        },
        True,
        # dbt's own tests left out: they pass on Spark (test_spark_pipeline) and would
        # double the JVM's work; the audits still run in the build
        *("--exclude-resource-type", "unit_test", "--exclude-resource-type", "test"),
    )

    # THEN the build passes and publishes exactly the landing's payments, amounts and
    # quarantined lines
    assert done.returncode == 0, done.stdout[-6000:]
    truth = expected_day(landing, DAY)
    facts = table_rows(warehouse, "main.fct_payments", "select count(*), sum(amount) from t")
    assert facts == [(truth.published, truth.amount)]
    quarantined = table_rows(warehouse, "main.payments_quarantine", "select count(*) from t")
    assert quarantined == [(truth.quarantined,)]
    # and the day's ledger names the seed rows refill computes for it from the copy's seeds
    from refill.warehouse.dbt_runner import DbtProject

    ledger = table_rows(
        warehouse, "ops.partition_ledger", "select distinct reference_fingerprint from t"
    )
    now = DbtProject(project_dir=project).catalog.reference_fingerprints(DAY, DAY)[DAY]
    assert [row[0] for row in ledger] == now


# Renders what the engine would be handed, and nothing else: no statement runs, so neither
# target opens a connection (no JVM, no cluster).
PATHS_PROBE = """
{% macro refill_test_engine_paths() %}
    {%- set seeds = refill_dataset_reference('payments').seeds.values() -%}
    {{ print('engine paths: ' ~ tojson({
        'landing': refill_spark_landing_root('payments'),
        'seeds': seeds | map(attribute='file') | list})) }}
{% endmacro %}
"""


@pytest.mark.parametrize("target", ["spark", "spark-cluster"])
def test_each_spark_target_hands_the_engine_absolute_paths_whatever_the_project_dir(
    tmp_path, target
):
    # GIVEN a project copy at a relative path under the working directory, REFILL_LANDING
    # unset (its default, data/landing, relative to the project)
    working, project = project_copy(tmp_path, {"macros/refill_test_engine_paths.sql": PATHS_PROBE})
    env = {**os.environ, "DBT_TARGET": target, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    for inherited in ("REFILL_LANDING", "DBT_TARGET_PATH", "DBT_LOG_PATH", "REFILL_PROJECT_DIR"):
        env.pop(inherited, None)

    # WHEN dbt renders them from another folder, the project dir relative, through a shell
    command = [str(DBT), "run-operation", "refill_test_engine_paths"]
    command += ["--project-dir", RELATIVE, "--profiles-dir", RELATIVE]
    done = subprocess.run(
        ["bash", "-c", 'exec "$@"', "bash", *command],
        cwd=working,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )

    # THEN the landing root and every seed file are the project's, by absolute paths
    assert done.returncode == 0, done.stdout[-4000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("engine paths: ")]
    paths = json.loads(line.removeprefix("engine paths: "))
    assert paths["landing"] == str(project / "data" / "landing")
    assert sorted(paths["seeds"]) == sorted(
        str(project / "seeds" / name) for name in ("fx_rates_daily.csv", "markets.csv")
    )
