"""The Spark tests run on one local Spark cluster (tools/spark_cluster.py: a master, a
worker and a Thrift Server with a Hive metastore), started once for the whole session, or
the one CI started ($REFILL_SPARK_CLUSTER_STATE); dbt and refill are its clients over
thrift (`DBT_TARGET=spark-cluster`), as a team's would be. Each test gets an empty warehouse
on it (its databases dropped, its files removed), its own landing and its own lock folder.

The `spark` target (dbt-spark's session method, a Spark in the test's process) keeps a
small test of its own (test_spark_session.py), on its own SparkSession (`spark`)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="the spark extra is not installed: make setup-spark")
pytest.importorskip("pyhive", reason="the spark extra is not installed: make setup-spark")

from refill.warehouse.dbt_runner import DbtProject  # noqa: E402
from refill.warehouse.spark_thrift import SparkClusterWarehouse  # noqa: E402
from tools import spark_cluster  # noqa: E402

# CI starts the cluster once (.ci/run) and names its state folder here.
CLUSTER_STATE_ENV = "REFILL_SPARK_CLUSTER_STATE"


def pytest_collection_modifyitems(items):
    """One worker runs every Spark test (pytest-xdist's `--dist loadgroup`): each test
    empties the one cluster's warehouse, so two at once would empty each other's."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.xdist_group("spark-cluster"))


@pytest.fixture(scope="session")
def cluster(tmp_path_factory) -> spark_cluster.Cluster:
    """The session's cluster: CI's when it started one, else one started here and stopped
    at the end of the session."""
    given = os.environ.get(CLUSTER_STATE_ENV)
    if given:
        yield spark_cluster.start(Path(given))  # idempotent: a healthy one is used as is
        return
    state = tmp_path_factory.mktemp("spark-cluster")
    started = spark_cluster.start(state)
    try:
        yield started
    finally:
        spark_cluster.stop(state)


@dataclass
class ClusterWorkspace:
    """A test's landing, its lock folder and the cluster's (emptied) warehouse."""

    landing: Path
    locks: Path
    tables: Path  # the cluster's warehouse folder: <schema>.db/<table>
    cluster: spark_cluster.Cluster

    def environment(self) -> dict[str, str]:
        """What a `refill` or `dbt` process needs to build on this workspace."""
        return {
            **self.cluster.environment(),
            "REFILL_LANDING": str(self.landing),
            "REFILL_SPARK_WAREHOUSE": str(self.locks),
        }

    def rows(self, sql: str, parameters: list | None = None) -> list[tuple]:
        """A query on the cluster through the warehouse boundary (a Thrift session)."""
        connection = SparkClusterWarehouse(self.locks).open(read_only=True, wait_seconds=0)
        try:
            return connection.execute(sql, parameters).fetchall()
        finally:
            connection.close()


@pytest.fixture
def cluster_workspace(cluster, tmp_path, monkeypatch) -> ClusterWorkspace:
    """An empty warehouse on the session's cluster, with this process's environment pointing
    dbt and refill at it."""
    spark_cluster.reset(cluster)
    workspace = ClusterWorkspace(
        tmp_path / "landing", tmp_path / "locks", Path(cluster.state) / "warehouse", cluster
    )
    workspace.landing.mkdir()
    for key, value in workspace.environment().items():
        monkeypatch.setenv(key, value)
    return workspace


@pytest.fixture(scope="session")
def prefect_api(prefect_harness) -> dict[str, str]:
    """The session's Prefect server, for the `refill` processes the Spark tests start: with
    no API named, each would start a temporary server of its own (seconds of CPU each, on
    cores the cluster needs; that cold path is tested in tests/flows/test_interrupts.py)."""
    from prefect.settings import PREFECT_API_URL

    return {"PREFECT_API_URL": PREFECT_API_URL.value()}


@pytest.fixture(scope="session")
def cluster_dbt(cluster) -> DbtProject:
    """The project parsed once for the spark-cluster target (each invocation connects with
    the environment of its moment)."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in cluster.environment().items():
            patch.setenv(key, value)
        project = DbtProject()
        project.manifest  # noqa: B018 (parsed now, for the spark adapter)
    return project


@dataclass
class SparkWorkspace:
    """A test's own landing folder, on a warehouse emptied for it (the `spark` target)."""

    landing: Path
    warehouse: Path


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """A SparkSession in this process with the `spark` target's settings (profiles.yml):
    dbt-spark's session method returns it. Only the session target's own test starts it."""
    from refill.warehouse import spark_engine

    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_SPARK_MASTER", "local[2]")
        session = spark_engine.session(warehouse)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_dbt(spark) -> DbtProject:
    """The project parsed for the spark target."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DBT_TARGET", "spark")
        project = DbtProject()
        project.manifest  # noqa: B018
    return project


@pytest.fixture
def spark_workspace(spark, tmp_path, monkeypatch) -> SparkWorkspace:
    """A fresh warehouse for the `spark` target: every database of the in-memory catalog
    dropped and the warehouse folder emptied (tables are external: dropping keeps files)."""
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
