"""The warehouse boundary: one interface, DuckDB its one implementation; the engine's
exceptions and the retry verdict on them; the ops reads that replaced each module's own
connect/exists/published-days helpers."""

from __future__ import annotations

import inspect
import pickle
import subprocess
import sys
import textwrap
from datetime import date
from pathlib import Path

import duckdb
import pytest

from refill.errors import RefillError
from refill.warehouse import cutover_store, locking, ops
from refill.warehouse.duckdb_engine import DuckDBWarehouse
from refill.warehouse.engine import ENGINE_ERRORS, Warehouse, is_transient, warehouse_at
from refill.warehouse.spark_engine import SparkWarehouse
from refill.warehouse.spark_thrift import SparkClusterWarehouse

LEDGER = """
    create schema ops;
    create table ops.partition_ledger (
        model_name varchar, partition_date date, status varchar
    );
    insert into ops.partition_ledger values
        ('fct_x_v2', date '2026-01-02', 'published'),
        ('fct_x_v2', date '2026-01-01', 'published'),
        ('fct_x_v2', date '2026-01-03', 'failed'),
        ('fct_x_v1', date '2026-01-04', 'published');
"""


def make_warehouse(path: Path, sql: str = "select 1") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(path)) as connection:
        connection.execute(sql)
    return path


@pytest.mark.parametrize("engine", [DuckDBWarehouse, SparkWarehouse, SparkClusterWarehouse])
def test_each_engine_implements_every_member_of_the_interface(engine):
    members = [
        name
        for name in vars(Warehouse)
        if not name.startswith("_") and name not in ("path", "errors")
    ]
    for name in members:
        ours = inspect.signature(getattr(engine, name))
        theirs = inspect.signature(getattr(Warehouse, name))
        assert list(ours.parameters) == list(theirs.parameters), name
    assert isinstance(engine.concurrent_writers, bool) and isinstance(engine.name, str)
    assert set(engine.errors) <= set(ENGINE_ERRORS)
    assert DuckDBWarehouse.errors == (duckdb.Error,)


def test_the_engine_follows_the_dbt_target(tmp_path, monkeypatch):
    monkeypatch.setenv("REFILL_WAREHOUSE", str(tmp_path / "refill.duckdb"))
    monkeypatch.setenv("REFILL_SPARK_WAREHOUSE", str(tmp_path / "spark"))
    monkeypatch.delenv("DBT_TARGET", raising=False)
    assert warehouse_at() == DuckDBWarehouse(tmp_path / "refill.duckdb")
    assert not warehouse_at().concurrent_writers
    monkeypatch.setenv("DBT_TARGET", "spark")
    assert warehouse_at() == SparkWarehouse(tmp_path / "spark")
    assert warehouse_at().concurrent_writers
    monkeypatch.setenv("DBT_TARGET", "spark-cluster")
    assert warehouse_at() == SparkClusterWarehouse(tmp_path / "spark")
    assert warehouse_at().concurrent_writers and warehouse_at().name == "spark-cluster"
    monkeypatch.setenv("DBT_TARGET", "postgres")
    with pytest.raises(RefillError, match="DBT_TARGET 'postgres' is not a target of profiles"):
        warehouse_at()


def test_the_warehouse_is_at_the_configured_path_unless_given_one(tmp_path, monkeypatch):
    monkeypatch.setenv("REFILL_WAREHOUSE", str(tmp_path / "elsewhere" / "refill.duckdb"))
    assert warehouse_at().path == tmp_path / "elsewhere" / "refill.duckdb"
    assert warehouse_at(tmp_path / "w.duckdb").path == tmp_path / "w.duckdb"
    assert not warehouse_at().exists()


@pytest.mark.parametrize(
    "error, transient",
    [
        (locking.LockTimeout("held by run x"), True),
        (locking.WarehouseOpenElsewhere("open in duckdb"), True),
        (pickle.loads(pickle.dumps(locking.LockTimeout("held by run x"))), True),
        (locking.LockTimeout("held, and waiting cannot help", transient=False), False),
        (RefillError("not ready"), False),
        (RefillError("an I/O hiccup", transient=True), True),
        (duckdb.IOException("Could not set lock on file"), True),
        (duckdb.CatalogException("Table with name x does not exist"), False),
        (ValueError("a bug"), False),
    ],
)
def test_a_retry_helps_only_where_a_pause_can(error, transient):
    assert is_transient(error) is transient


def test_a_reader_refuses_a_missing_warehouse_and_creates_nothing(tmp_path):
    warehouse = warehouse_at(tmp_path / "missing" / "refill.duckdb")
    with pytest.raises(RefillError, match="no warehouse at"):
        warehouse.check_readable()
    with pytest.raises(RefillError, match="no warehouse at"):
        with warehouse.read():
            pass
    assert not (tmp_path / "missing").exists()


def test_a_read_is_read_only_and_a_writer_connection_writes(tmp_path):
    warehouse = warehouse_at(make_warehouse(tmp_path / "refill.duckdb"))
    with warehouse.connect() as connection:
        connection.execute("create table written as select 1 as one")
    with warehouse.read(reader="test") as connection:
        assert connection.execute("select one from written").fetchall() == [(1,)]
        with pytest.raises(duckdb.Error):
            connection.execute("create table refused as select 1")
    # the read let go of the lock
    assert locking.read_holder(warehouse.path) is None


HOLD_THE_FILE = """
    import sys, time
    import duckdb
    connection = duckdb.connect(sys.argv[1], read_only=True)
    print("open", flush=True)
    time.sleep(60)
"""


def test_a_file_held_outside_refill_is_refused_naming_the_process(tmp_path):
    # GIVEN a process outside refill with the warehouse open
    path = make_warehouse(tmp_path / "refill.duckdb")
    outside = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLD_THE_FILE), str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert outside.stdout.readline().strip() == "open"
        # WHEN a writer opens it without waiting, and cutover opens its transaction
        with pytest.raises(locking.WarehouseOpenElsewhere) as refused:
            warehouse_at(path).open(read_only=False, wait_seconds=0)
        with pytest.raises(RefillError) as cutover_refused:
            with cutover_store.transaction(warehouse_at(path)):
                pass
    finally:
        outside.kill()
        outside.wait()
    # THEN both name the process; the error carries it, and it is transient
    assert refused.value.holder.pid == outside.pid
    assert f"PID {outside.pid}" in str(refused.value) and "waited 0s" in str(refused.value)
    assert is_transient(refused.value)
    message = str(cutover_refused.value)
    assert message.startswith("cutover refused: the warehouse is open in process")
    assert f"PID {outside.pid}" in message and "run again when it closes it" in message


def test_the_cutover_transaction_rolls_back_on_a_refusal(tmp_path):
    warehouse = warehouse_at(make_warehouse(tmp_path / "refill.duckdb", "create table t (x int)"))
    with pytest.raises(RefillError, match="refused"):
        with cutover_store.transaction(warehouse) as connection:
            connection.execute("insert into t values (1)")
            raise RefillError("refused")
    with warehouse.read() as connection:
        assert connection.execute("select count(*) from t").fetchone() == (0,)


def test_the_ledger_reads_that_replaced_each_modules_own(tmp_path):
    path = make_warehouse(tmp_path / "refill.duckdb", LEDGER)
    with warehouse_at(path).read() as connection:
        assert ops.has_table(connection, "ops", "partition_ledger")
        assert ops.has_ops(connection)
        assert not ops.has_table(connection, "ops", "seed_loads")
        # a warehouse from before ops.seed_loads has no seeds loaded (not an error)
        assert not ops.seeds_are_loaded(connection, {"seed.x": ("main", "x")}, "key")
        assert ops.read_published_days(connection, "fct_x_v2") == [
            date(2026, 1, 1),
            date(2026, 1, 2),
        ]
        assert cutover_store.published_days(connection, "fct_x_v3") == []
        assert cutover_store.read_pointer(connection, "fct_x") is None
        assert not cutover_store.relation_exists(connection, "fct_x_v2")


def test_the_preview_is_refused_by_name_where_a_process_keeps_its_own_catalog_and_cutover_is_not(
    tmp_path, monkeypatch, dbt_project
):
    """A preview's kept chunks must outlive the process that kept them; on the `spark`
    target (a Spark in each process, its catalog in memory) they would not, so it is refused
    in one line before anything is read or written (the spark-cluster target's metastore
    keeps them: tests/spark/test_preview_spark.py). Cutover is built there (one appended
    pointer row, tests/spark/test_cutover_spark.py): it goes on to its own checks, here the
    missing warehouse, and writes nothing either."""
    from flows.preview import preview_path
    from refill.cli import cutover
    from refill.errors import UsageError

    dbt_project.catalog  # noqa: B018 (parsed before the target changes: the catalog is the same)
    monkeypatch.setattr(cutover, "shared_project", lambda: dbt_project)
    monkeypatch.setenv("DBT_TARGET", "spark")
    monkeypatch.setenv("REFILL_SPARK_WAREHOUSE", str(tmp_path / "spark"))
    with pytest.raises(UsageError, match=r"^a restatement preview .* not spark, whose catalog"):
        preview_path(
            None,
            None,
            None,
            confirm=True,
            command_line="refill backfill --preview",
            lock_wait_seconds=0,
            expect_change=None,
            report_dir=None,
        )
    with pytest.raises(RefillError, match=r"^cutover refused: no warehouse at .*spark") as refused:
        cutover.cutover("fct_daily_revenue", 2, False, True, False, "refill cutover")
    assert not isinstance(refused.value, UsageError)  # not the engine's refusal
    assert not (tmp_path / "spark").exists()  # nothing written

    monkeypatch.setenv("DBT_TARGET", "duckdb")
    assert warehouse_at(tmp_path / "w.duckdb").transactions
