"""dbt as CI and orchestrators run it: `dbt build --vars ... --project-dir <relative>
--profiles-dir <relative>`, from another working directory, through a shell. Every path the
engine opens is absolute, whatever the project dir (issue 34, finding 15): the seed files
the reference fingerprints are computed from, the landing root, the tables' folders. On
DuckDB the engine is dbt's own process, so a relative path worked there; on Spark the rule
runs in a folder of Spark's and failed every window
(tests/spark/test_relative_project_dir_spark.py).

A relative project dir is resolved against dbt's working directory as the shell gave it
($PWD); one that names another folder is refused in one line, never read."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import duckdb

from refill.rules.window import window_vars
from refill.sample_data import DaySpec, write_days
from tests.helpers import expected_day, patched_project

DBT = Path(sys.executable).with_name("dbt")
DAY = date(2026, 1, 2)
SPEC = DaySpec(payments=30, malformed_rate=0.1, replay_rate=0.05, conflict_rate=0.03)
RELATIVE = "checkouts/refill"  # the project dir as the command gives it


def project_copy(tmp_path: Path, files: dict[str, str] | None = None) -> tuple[Path, Path]:
    """A working directory and, under it at RELATIVE, a copy of the project (with `files`
    written over it)."""
    from refill.warehouse.dbt_runner import DbtProject

    working = tmp_path / "work"
    return working, patched_project(DbtProject().project_dir, working / RELATIVE, files or {})


def plain_build(
    working: Path, environment: dict[str, str], shell: bool = True, *extra: str
) -> subprocess.CompletedProcess:
    """`dbt build --vars <DAY> --project-dir RELATIVE --profiles-dir RELATIVE` run in
    `working`: through a shell (which sets $PWD, as a terminal's or CI's does), or, with
    `shell=False`, started directly with the environment as given. `extra`: more of dbt's
    arguments."""
    command = [str(DBT), "build", "--vars", json.dumps(window_vars(DAY, DAY)), *extra]
    command += ["--project-dir", RELATIVE, "--profiles-dir", RELATIVE]
    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", **environment}
    for inherited in ("DBT_TARGET_PATH", "DBT_LOG_PATH", "REFILL_PROJECT_DIR"):
        env.pop(inherited, None)  # the project's own target/ and logs/, as a user's
    if shell:
        command = ["bash", "-c", 'exec "$@"', "bash", *command]
    return subprocess.run(
        command, cwd=working, env=env, capture_output=True, text=True, timeout=1800
    )


def files_given_to_the_engine(project: Path) -> list[str]:
    """The seed files the reference statement of the build named (its run SQL)."""
    compiled = next((project / "target" / "run").rglob("stg_payments__manifests.sql"))
    return re.findall(r'\\?"file\\?": \\?"([^"\\]*)', compiled.read_text())


def test_a_build_from_another_folder_with_a_relative_project_dir_gives_the_engine_absolute_paths(
    tmp_path,
):
    # GIVEN a landed day and a project copy at a relative path under the working directory
    working, project = project_copy(tmp_path)
    landing = tmp_path / "landing"
    write_days(landing, DAY, 1, SPEC)
    warehouse = tmp_path / "warehouse" / "ci.duckdb"
    warehouse.parent.mkdir()

    # WHEN CI builds it with plain dbt, the project dir relative
    done = plain_build(
        working, {"REFILL_LANDING": str(landing), "REFILL_WAREHOUSE": str(warehouse)}
    )

    # THEN it publishes the landing's own numbers
    assert done.returncode == 0, done.stdout[-4000:]
    truth = expected_day(landing, DAY)
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        facts = connection.execute("select count(*), sum(amount) from main.fct_payments").fetchall()
        ledger = connection.execute(
            "select distinct reference_fingerprint from ops.partition_ledger"
        ).fetchall()
    assert facts == [(truth.published, truth.amount)]
    # and the seed files the engine read are named by absolute paths, the copy's own
    files = files_given_to_the_engine(project)
    assert sorted(files) == sorted(
        str(project / "seeds" / name) for name in ("fx_rates_daily.csv", "markets.csv")
    ), files
    # and the day's ledger names the seed rows refill computes for it from those files
    from refill.warehouse.dbt_runner import DbtProject

    now = DbtProject(project_dir=project).catalog.reference_fingerprints(DAY, DAY)[DAY]
    assert [row[0] for row in ledger] == now


def test_a_working_directory_the_environment_misnames_is_refused_in_one_line(tmp_path):
    # GIVEN the project copy, and another checkout at the same relative path whose fx
    # rates differ: the folder a stale $PWD names (a parent that changed directory
    # without a shell, so without updating it)
    working, project = project_copy(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    other = patched_project(project, elsewhere / RELATIVE, {})
    rates = other / "seeds" / "fx_rates_daily.csv"
    header, first, *rest = rates.read_text().splitlines(keepends=True)
    *cells, rate = first.rstrip("\n").split(",")
    rates.write_text("".join([header, ",".join([*cells, str(float(rate) * 2)]) + "\n", *rest]))
    landing = tmp_path / "landing"
    write_days(landing, DAY, 1, SPEC)
    warehouse = tmp_path / "warehouse" / "ci.duckdb"
    warehouse.parent.mkdir()

    # WHEN dbt is started in the project's parent with $PWD naming the other folder
    done = plain_build(
        working,
        {"REFILL_LANDING": str(landing), "REFILL_WAREHOUSE": str(warehouse), "PWD": str(elsewhere)},
        shell=False,
    )

    # THEN the build stops, saying which seed file is not the one dbt parsed and what to
    # do, and publishes nothing
    assert done.returncode != 0
    refusals = [line for line in done.stdout.splitlines() if "is not the file dbt parsed" in line]
    assert refusals, done.stdout[-4000:]
    assert str(rates) in refusals[0] and "absolute --project-dir" in refusals[0], refusals[0]
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        ledger = connection.execute("select count(*) from ops.partition_ledger").fetchall()
        facts = connection.execute(
            "select table_schema from information_schema.tables where table_name = 'fct_payments'"
        ).fetchall()
        published = (
            connection.execute("select count(*) from main.fct_payments").fetchall()
            if ("main",) in facts
            else [(0,)]
        )
    assert ledger == [(0,)] and published == [(0,)]
