"""One local SparkSession for every Spark test (the JVM's start-up is paid once), and
dbt run in-process on it (dbt-spark's session method reuses the session)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="the spark extra is not installed: make setup-spark")

from refill.warehouse.dbt_runner import DbtProject  # noqa: E402


@dataclass
class SparkWorkspace:
    """A test's own landing folder, on a warehouse emptied for it."""

    landing: Path
    warehouse: Path


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """The session, with the spark target's settings (profiles.yml): dbt's getOrCreate
    returns it. Its warehouse folder is the session's; each test empties it."""
    from pyspark.sql import SparkSession

    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
        .config("spark.sql.catalogImplementation", "in-memory")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_dbt(spark) -> DbtProject:
    """The project parsed for the spark target (DBT_TARGET is read again at each call)."""
    previous = os.environ.get("DBT_TARGET")
    os.environ["DBT_TARGET"] = "spark"
    try:
        project = DbtProject()
        project.manifest  # noqa: B018 (parsed now, for the spark adapter)
    finally:
        if previous is None:
            del os.environ["DBT_TARGET"]
        else:
            os.environ["DBT_TARGET"] = previous
    return project


@pytest.fixture
def spark_workspace(spark, tmp_path, monkeypatch) -> SparkWorkspace:
    """A fresh warehouse: every database of the in-memory catalog dropped and the
    warehouse folder emptied (tables are external: dropping them keeps their files)."""
    landing = tmp_path / "landing"
    landing.mkdir()
    warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
    for row in spark.sql("show databases").collect():
        if row[0] != "default":
            spark.sql(f"drop database {row[0]} cascade")
    for child in warehouse.iterdir() if warehouse.exists() else []:
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    monkeypatch.setenv("REFILL_LANDING", str(landing))
    monkeypatch.setenv("REFILL_SPARK_WAREHOUSE", str(warehouse))
    monkeypatch.setenv("DBT_TARGET", "spark")
    return SparkWorkspace(landing, warehouse)
