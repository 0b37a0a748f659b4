"""The warehouse boundary on Apache Spark (local, `method: session`): a folder, many writers.

docs/spark.md is the measured basis. The warehouse is a folder ($REFILL_SPARK_WAREHOUSE)
holding Spark's tables (`<schema>.db/<table>`, parquet partitioned by day: Spark's own
layout, `spark.sql.warehouse.dir`) and refill's locks (`locks/`). With Spark's in-memory
catalog, several processes write at once (each its own SparkSession), so chunks over
disjoint days can run in parallel: the lock protocol is a lock per day
(refill.warehouse.partition_locks), with live runs first.

Spark has no bound parameters: the `Connection` adapter renders each `?` as a typed, escaped
literal (refill.warehouse.spark_literals, their one home) and wraps the engine's exceptions
in `SparkEngineError`, so callers catch one class without importing pyspark. Spark has no
multi-statement transactions either: begin/commit are markers and `rollback` cannot undo a
statement (the publish protocol never relies on it: docs/spark.md section 7). pyspark is
imported only here and only when a session is first needed.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from typing import Any, ClassVar

from refill.errors import RefillError
from refill.warehouse import locking, partition_locks, spark_literals

# The SparkSession's settings. dbt-spark's session method reuses a session that already
# exists in the process (its own settings are then ignored), so these must say what the
# `spark` target in profiles.yml says: docs/spark.md section 2.
MASTER_ENV = "REFILL_SPARK_MASTER"
DRIVER_MEMORY_ENV = "REFILL_SPARK_DRIVER_MEMORY"
DEFAULT_MASTER = "local[2]"
DEFAULT_DRIVER_MEMORY = "1g"


class SparkEngineError(Exception):
    """An error Spark (or its JVM bridge) raised, as the boundary passes it on."""


def session_settings(folder: Path) -> dict[str, str]:
    """The Spark settings of a session on the warehouse in `folder`."""
    return {
        "spark.master": os.environ.get(MASTER_ENV, DEFAULT_MASTER),
        "spark.driver.memory": os.environ.get(DRIVER_MEMORY_ENV, DEFAULT_DRIVER_MEMORY),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.session.timeZone": "UTC",
        # Spark's default (static) deletes every other day of the table: never that.
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        # Derby's embedded metastore admits one process; the in-memory catalog admits many.
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.warehouse.dir": str(folder),
        # a table's days are its folders, listed when read (no partition list to repair)
        "spark.sql.hive.manageFilesourcePartitions": "false",
        # every table is external at its folder: a rebuild in a new process replaces files
        "spark.sql.legacy.allowNonEmptyLocationInCTAS": "true",
    }


def session(folder: Path):
    """The process's SparkSession on the warehouse in `folder` (created once per process:
    its start-up is the costly part, tens of seconds; every later call reuses it)."""
    from pyspark.sql import SparkSession

    # The engine runs the readiness rule in a Python of its own (spark_readiness): this one,
    # which imports refill (the JVM, started below, passes its environment on).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("refill")
    for key, value in session_settings(folder).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("FATAL")  # its errors reach refill as exceptions
    return spark


# Schemas of work tables private to the chunk that writes them (dbt_project.yml: staging;
# spark__refill_shadow_relation: wap). Another process may be writing or emptying their files
# at this moment, and reading a footer mid-write fails (CANNOT_READ_FILE_FOOTER), so they are
# never registered here: refill reads only the ops, reference and published relations.
PRIVATE_WORK_SCHEMAS = frozenset({"staging", "wap"})


def register_tables(spark, folder: Path) -> list[str]:
    """Make the tables already written under `folder` known to this process's in-memory
    catalog (a new process starts with an empty one): each `<schema>.db/<table>` folder as a
    parquet table, its day partitions recovered, except the chunks' private work tables
    (PRIVATE_WORK_SCHEMAS). Returns the names registered. (dbt's on-run-start registers them
    for dbt; this is for refill's own reads outside dbt.)"""
    root = folder
    names = []
    for schema_dir in sorted(root.glob("*.db")) if root.is_dir() else []:
        schema = schema_dir.name.removesuffix(".db")
        if schema in PRIVATE_WORK_SCHEMAS:
            continue
        spark.sql(f"create database if not exists {_identifier(schema)}")
        for table_dir in sorted(path for path in schema_dir.iterdir() if path.is_dir()):
            if not any(table_dir.rglob("*.parquet")):
                continue
            name = f"{_identifier(schema)}.{_identifier(table_dir.name)}"
            location = spark_literals.string_literal(str(table_dir))
            spark.sql(
                f"create table if not exists {name} using parquet "
                f"options (partitionOverwriteMode 'dynamic') location {location}"
            )
            with contextlib.suppress(Exception):  # a table without partitions has none to find
                spark.sql(f"alter table {name} recover partitions")
            names.append(name)
    return names


def _identifier(name: str) -> str:
    """A folder name as a Spark identifier, refused unless plain (it came from the disk)."""
    if not name or not all(char.isalnum() or char == "_" for char in name):
        raise RefillError(f"the Spark warehouse holds a folder {name!r} that is not a table name")
    return f"`{name}`"


def _collect_in_utc(frame) -> list[tuple]:
    """The rows of `frame`, with every timestamp as the naive UTC instant it is in the
    warehouse (DuckDB's reads give the same). pyspark turns a timestamp into the host's local
    time, so on a host outside UTC every published_at, started_at and switched_at read back
    would move by the host's offset."""
    from pyspark.sql.types import TimestampType  # not TimestampNTZType: that one has no zone

    instants = [
        index
        for index, field in enumerate(frame.schema.fields)
        if isinstance(field.dataType, TimestampType)
    ]
    rows = [list(row) for row in frame.collect()]
    for row in rows:
        for index in instants:
            if row[index] is not None:
                row[index] = row[index].astimezone(UTC).replace(tzinfo=None)
    return [tuple(row) for row in rows]


_TABLES_VIEW = "refill_information_schema_tables"
_COLUMNS_VIEW = "refill_information_schema_columns"
TABLES_SCHEMA = "table_schema string, table_name string, table_type string"
COLUMNS_SCHEMA = (
    "table_schema string, table_name string, column_name string, data_type string,"
    " ordinal_position int"
)


class SessionStatements:
    """The statements of a SparkConnection run on a SparkSession in this process (the
    `spark` target); ThriftStatements (refill.warehouse.spark_thrift) on a cluster."""

    def __init__(self, spark):
        self._spark = spark

    def sql(self, text: str) -> list[tuple]:
        return _collect_in_utc(self._spark.sql(text))

    def appends_folder(self) -> str:
        return self._spark.conf.get("spark.sql.warehouse.dir")

    def catalog(self, with_columns: bool) -> tuple[list[tuple], list[tuple]]:
        """Every table and view of the catalog (schema, name, BASE TABLE or VIEW) and, when
        asked, their columns (schema, table, column, DuckDB's spelling of its type, position)."""
        catalog = self._spark.catalog
        tables, columns = [], []
        for database in catalog.listDatabases():
            for table in catalog.listTables(database.name):
                if table.isTemporary:
                    continue
                kind = "VIEW" if table.tableType == "VIEW" else "BASE TABLE"
                tables.append((database.name, table.name, kind))
                if not with_columns:
                    continue
                listed = catalog.listColumns(f"{database.name}.{table.name}")
                for position, column in enumerate(listed, start=1):
                    columns.append(
                        (database.name, table.name, column.name, column.dataType.upper(), position)
                    )
        return tables, columns

    def temporary_view(self, name: str, schema: str, rows: list[tuple]) -> None:
        self._spark.createDataFrame(rows, schema).createOrReplaceTempView(name)

    def close(self) -> None:
        """The session stays: it is the process's, shared with dbt."""


class SparkConnection:
    """The boundary's `Connection` on Spark: `?` rendered as literals, results collected as
    tuples, the engine's errors as SparkEngineError. Its statements run on a SparkSession in
    this process (SessionStatements) or on a cluster's Thrift Server (spark_thrift)."""

    def __init__(self, statements, *, read_only: bool):
        self._statements = statements
        self._rows: list[tuple] = []
        self.read_only = read_only
        # Spark's parquet tables have no update or delete: the logs are append-only there,
        # read latest row wins (spark__refill_create_ops_relations); refill.warehouse.ops
        # writes a closing row instead of updating the opening one.
        self.append_only = True

    def execute(self, query: str, parameters: Sequence[Any] | None = None) -> SparkConnection:
        text = spark_literals.render(query, parameters)
        try:
            if "information_schema." in text:
                text = self._with_information_schema(text)
            if text.lstrip()[:6].lower() == "insert":  # an append: partition_locks' why
                with partition_locks.appends_in_turn(self._statements.appends_folder()):
                    self._rows = self._statements.sql(text)
            else:
                self._rows = self._statements.sql(text)
        except (RefillError, SparkEngineError):
            raise
        except Exception as error:  # noqa: BLE001 (the engine's and its client's, as one)
            raise SparkEngineError(f"{type(error).__name__}: {error}") from error
        return self

    def _with_information_schema(self, text: str) -> str:
        """Spark has no information_schema: the two views refill's portable SQL reads
        (`tables`, `columns`: schema, name, column name and type, DuckDB's spelling of a
        type, which readers compare) are answered from the catalog, as temporary views
        refreshed for the statement."""
        with_columns = "information_schema.columns" in text
        tables, columns = self._statements.catalog(with_columns)
        self._statements.temporary_view(_TABLES_VIEW, TABLES_SCHEMA, tables)
        if with_columns:
            self._statements.temporary_view(_COLUMNS_VIEW, COLUMNS_SCHEMA, columns)
        return text.replace("information_schema.tables", _TABLES_VIEW).replace(
            "information_schema.columns", _COLUMNS_VIEW
        )

    def executemany(self, query: str, parameters: Sequence[Sequence[Any]]) -> SparkConnection:
        for values in parameters:
            self.execute(query, values)
        return self

    def fetchone(self) -> tuple | None:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[tuple]:
        rows, self._rows = self._rows, []
        return rows

    # Spark has no transactions over several statements: these keep the protocol's shape.
    def begin(self) -> SparkConnection:
        return self

    def commit(self) -> SparkConnection:
        return self

    def rollback(self) -> SparkConnection:
        return self

    def close(self) -> None:
        self._rows = []
        self._statements.close()


@dataclass(frozen=True)
class SparkWarehouse:
    """The Spark warehouse in the folder `path` (refill.warehouse.engine.Warehouse)."""

    path: Path

    errors: ClassVar[tuple[type[BaseException], ...]] = (SparkEngineError,)
    # Several processes may write at once (in-memory catalog, disjoint days): the planner
    # runs up to --max-concurrency chunks in parallel.
    concurrent_writers: ClassVar[bool] = True
    name: ClassVar[str] = "spark"
    # Parquet tables have no multi-statement commit: `refill cutover` switches with one
    # appended pointer row instead (refill/cli/cutover.py, docs/cutover.md "On Spark"), a
    # preview keeps and publishes its chunks ledger last (spark__refill_keep_preview).
    transactions: ClassVar[bool] = False
    # A process's catalog is in memory: a preview kept by one is not the next one's
    # (refill.warehouse.engine.require_previews); the cluster's metastore keeps it.
    keeps_previews: ClassVar[bool] = False

    @staticmethod
    def is_transient_error(error: BaseException) -> bool:
        """A concurrent reader can fail while an overwrite commits (FILE_NOT_EXIST,
        docs/spark.md): reading again later succeeds."""
        text = str(error)
        return isinstance(error, SparkEngineError) and (
            "FILE_NOT_EXIST" in text or "FileNotFoundException" in text
        )

    def exists(self) -> bool:
        """A warehouse exists once dbt created its ops tables (`ops.db`, Spark's layout)."""
        return (self.path / "ops.db").is_dir()

    def check_readable(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise RefillError(
                f"the Spark warehouse {self.path} is a file, not a folder; point "
                "REFILL_SPARK_WAREHOUSE at the warehouse folder"
            )
        if not self.exists():
            raise RefillError(
                f"{self.where_missing()}, or build it first (`refill daily` or `refill backfill`)"
            )

    def where_missing(self) -> str:
        """The start of the one line refusing to read a warehouse that does not exist."""
        return f"no Spark warehouse at {self.path}: check REFILL_SPARK_WAREHOUSE"

    def lock(
        self,
        *,
        run_id: str,
        command: str,
        priority: str,
        partitions: list | None = None,
        wait_seconds: float = 900,
        on_wait: Callable | None = None,
    ) -> contextlib.AbstractContextManager:
        """The days' locks (two chunks over disjoint days write at once), live runs first."""
        return partition_locks.partition_locks(
            self.path,
            run_id=run_id,
            command=command,
            priority=priority,
            partitions=partitions,
            wait_seconds=wait_seconds,
            on_wait=on_wait,
        )

    def start_session(self) -> None:
        session(self.path)

    def live_waiting(self) -> bool:
        return locking.live_waiter(partition_locks.gate(self.path)) is not None

    def builders(self) -> list[locking.Holder]:
        """Every chunk building now, once each, with its days: two at once under
        --max-concurrency 2. Each holds its days' locks and each lock names the chunk's
        holder (partition_locks), so one chunk is found once per day it holds."""
        found: dict[tuple, locking.Holder] = {}
        for holder in partition_locks.holders(self.path).values():
            if holder.priority != locking.READ:
                found.setdefault((holder.run_id, holder.pid, tuple(holder.partitions)), holder)
        return sorted(found.values(), key=lambda holder: (holder.partitions, holder.pid))

    @contextlib.contextmanager
    def read(
        self,
        *,
        reader: str = "read",
        wait_seconds: float = locking.DEFAULT_READ_WAIT_SECONDS,
        on_wait: Callable | None = None,
    ) -> Iterator[SparkConnection]:
        """A reader on Spark needs no lock: parquet readers do not block writers (a read
        during an overwrite's commit can fail, and is retried as transient)."""
        self.check_readable()
        yield self.open(read_only=True, wait_seconds=wait_seconds)

    @contextlib.contextmanager
    def connect(self, *, wait_seconds: float | None = None) -> Iterator[SparkConnection]:
        yield self.open(read_only=False, wait_seconds=wait_seconds or 0)

    def open(self, *, read_only: bool, wait_seconds: float) -> SparkConnection:
        spark = session(self.path)
        if not read_only:
            self.path.mkdir(parents=True, exist_ok=True)
        _registered_once(self.path, spark)
        return SparkConnection(SessionStatements(spark), read_only=read_only)


_REGISTERED: set[Path] = set()


def _registered_once(folder: Path, spark) -> None:
    """Register the folder's tables once per process (dbt's on-run-start does it for dbt)."""
    if folder not in _REGISTERED:
        register_tables(spark, folder)
        _REGISTERED.add(folder)
