"""The warehouse boundary on a Spark cluster, over its Thrift Server (`DBT_TARGET=spark-cluster`).

The tables live in the cluster's metastore and warehouse; refill's processes are clients
of the one cluster, each with its own Thrift connections (PyHive, as dbt-spark's `thrift`
method), so no process here starts a JVM: a chunk worker costs a Python process, not a
Spark. The SQL is the `spark` target's (refill.warehouse.spark_engine.SparkConnection:
the same literals, the same append-only logs); what differs is where statements run and
what stays on this host: the locks (refill.warehouse.partition_locks) live in the local
folder $REFILL_SPARK_WAREHOUSE, beside the processes that take them.

Where the cluster is: $REFILL_SPARK_HOST, $REFILL_SPARK_PORT and $REFILL_SPARK_USER, which
the `spark-cluster` target in profiles.yml reads too.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import date
from typing import ClassVar

from refill.errors import RefillError
from refill.warehouse import spark_literals
from refill.warehouse.spark_engine import (
    PRIVATE_WORK_SCHEMAS,
    SparkConnection,
    SparkEngineError,
    SparkWarehouse,
)

HOST_ENV = "REFILL_SPARK_HOST"
PORT_ENV = "REFILL_SPARK_PORT"
USER_ENV = "REFILL_SPARK_USER"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 10000
DEFAULT_USER = "refill"
# Each session's settings, as the `spark-cluster` target sends them for dbt's (and as
# dbt-spark adds: ANSI off), so refill's own statements read and write alike.
SESSION_SETTINGS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.legacy.allowNonEmptyLocationInCTAS": "true",
    "spark.sql.ansi.enabled": "false",
}


def address() -> tuple[str, int, str]:
    """(host, port, user) of the cluster's Thrift Server, from the environment."""
    raw_port = os.environ.get(PORT_ENV, str(DEFAULT_PORT)).strip()
    if not raw_port.isdigit() or not 0 < int(raw_port) < 65536:
        raise RefillError(f"{PORT_ENV}={raw_port[:20]!r} is not a port number")
    host = os.environ.get(HOST_ENV, DEFAULT_HOST).strip() or DEFAULT_HOST
    return host, int(raw_port), os.environ.get(USER_ENV, DEFAULT_USER)


def connect():
    """A new Thrift session on the cluster (PyHive); refused in one line when unreachable."""
    from pyhive import hive

    host, port, user = address()
    try:
        return hive.connect(host=host, port=port, username=user, configuration=SESSION_SETTINGS)
    except Exception as error:  # noqa: BLE001 (thrift's transport errors, as one)
        raise RefillError(
            f"the Spark cluster's Thrift Server at {host}:{port} does not answer "
            f"({type(error).__name__}); start it, or check {HOST_ENV} and {PORT_ENV}",
            transient=True,
        ) from None


def _identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _converted(value, type_name: str):
    """A value as PyHive gives it (dates, arrays as text) in the Python type refill reads."""
    if value is None:
        return None
    if type_name == "DATE_TYPE":
        return date.fromisoformat(value)
    if type_name in ("ARRAY_TYPE", "MAP_TYPE", "STRUCT_TYPE"):
        return json.loads(value)
    return value  # PyHive gives timestamps (naive, in the session's UTC) and decimals typed


class ThriftStatements:
    """A SparkConnection's statements on one Thrift session (its temporary views live as
    long as it does); appends take turns under `lock_folder` (partition_locks)."""

    def __init__(self, connection, lock_folder: str):
        self._connection = connection
        self._cursor = connection.cursor()
        self._lock_folder = lock_folder

    def sql(self, text: str) -> list[tuple]:
        try:
            self._cursor.execute(text)
        except Exception as error:  # noqa: BLE001 (PyHive's, with the engine's message inside)
            status = getattr(error.args[0], "status", None) if error.args else None
            if status is None or not status.errorMessage:
                raise
            raise SparkEngineError(" ".join(status.errorMessage.split())[:2000]) from None
        if not self._cursor.description:
            return []
        types = [column[1] for column in self._cursor.description]
        return [
            tuple(_converted(value, kind) for value, kind in zip(row, types, strict=True))
            for row in self._cursor.fetchall()
        ]

    def appends_folder(self) -> str:
        return self._lock_folder

    def catalog(self, with_columns: bool) -> tuple[list[tuple], list[tuple]]:
        """The metastore's tables and views refill may read, and their columns. Every
        client shares it: the chunks' private work schemas are left out (another chunk may
        be writing or dropping its tables there), and a table dropped between the listing
        and its description is not there."""
        tables, columns = [], []
        for (database,) in self.sql("show databases"):
            if database in PRIVATE_WORK_SCHEMAS:
                continue
            views = {row[1] for row in self.sql(f"show views in {_identifier(database)}")}
            for _, name, is_temporary in self.sql(f"show tables in {_identifier(database)}"):
                if is_temporary:
                    continue
                described = []
                if with_columns:
                    try:
                        described = self.sql(
                            f"describe table {_identifier(database)}.{_identifier(name)}"
                        )
                    except SparkEngineError as error:
                        if "TABLE_OR_VIEW_NOT_FOUND" in str(error):
                            continue  # dropped meanwhile by another client
                        raise
                tables.append((database, name, "VIEW" if name in views else "BASE TABLE"))
                for position, (column, data_type, *_) in enumerate(described, start=1):
                    if not column or column.startswith("#"):
                        break  # the partition section repeats the partition columns
                    columns.append((database, name, column, data_type.upper(), position))
        return tables, columns

    def temporary_view(self, name: str, schema: str, rows: list[tuple]) -> None:
        fields = [field.split() for field in schema.split(",")]
        typed = ", ".join(f"cast({column} as {kind}) as {column}" for column, kind in fields)
        if rows:
            values = ", ".join(
                "(" + ", ".join(spark_literals.literal(value) for value in row) + ")"
                for row in rows
            )
            names = ", ".join(column for column, _ in fields)
            source = f"values {values} as listed ({names})"
        else:
            nulls = ", ".join(f"null as {column}" for column, _ in fields)
            source = f"(select {nulls}) as listed where false"
        self.sql(f"create or replace temporary view {name} as select {typed} from {source}")

    def close(self) -> None:
        self._connection.close()


@dataclass(frozen=True)
class SparkClusterWarehouse(SparkWarehouse):
    """A Spark cluster's warehouse, reached over its Thrift Server; `path` is the local
    folder of refill's locks. Several processes write at once, as on `spark`."""

    name: ClassVar[str] = "spark-cluster"
    keeps_previews: ClassVar[bool] = True  # the metastore outlives every client
    errors: ClassVar[tuple[type[BaseException], ...]] = (SparkEngineError,)

    def exists(self) -> bool:
        """A warehouse exists once dbt created its ops tables in the cluster's metastore."""
        connection = self.open(read_only=True, wait_seconds=0)
        try:
            databases = connection.execute("show databases like 'ops'").fetchall()
            if not databases:
                return False
            found = connection.execute("show tables in ops like 'partition_ledger'").fetchall()
            return bool(found)
        finally:
            connection.close()

    def where_missing(self) -> str:
        host, port, _ = address()
        return f"no refill warehouse on the Spark cluster at {host}:{port} (no ops tables)"

    def start_session(self) -> None:
        """A worker's engine is the cluster: only check that it answers."""
        self.open(read_only=True, wait_seconds=0).close()

    def open(self, *, read_only: bool, wait_seconds: float) -> SparkConnection:
        if not read_only:
            self.path.mkdir(parents=True, exist_ok=True)
        return SparkConnection(ThriftStatements(connect(), str(self.path)), read_only=read_only)
