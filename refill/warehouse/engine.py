"""The one boundary to the engine: what the Python side asks of a warehouse, and the engine
that answers (DuckDB today, refill.warehouse.duckdb_engine).

Everything that differs between engines sits behind `Warehouse`: where the warehouse is and
whether it exists, the lock protocol, connections for reading (under the lock, read-only) and
for writing (the lock held), and the engine's own exceptions with their retry verdict. The
SQL to the ops relations (refill.warehouse.ops) and cutover's (refill.warehouse.cutover_store)
runs on a `Connection` in portable SQL, so a second engine (Spark) is one more class here,
not an edit in every module that reads the warehouse.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from refill import settings
from refill.errors import RefillError, UsageError
from refill.warehouse.duckdb_engine import DuckDBWarehouse
from refill.warehouse.spark_engine import SparkWarehouse
from refill.warehouse.spark_thrift import SparkClusterWarehouse


class Connection(Protocol):
    """A DB-API-like connection, as the engine's client library gives it."""

    def execute(self, query: str, parameters: Sequence[Any] | None = None) -> Connection: ...

    def executemany(self, query: str, parameters: Sequence[Sequence[Any]]) -> Connection: ...

    def fetchone(self) -> tuple | None: ...

    def fetchall(self) -> list[tuple]: ...

    def begin(self) -> Connection: ...

    def commit(self) -> Connection: ...

    def rollback(self) -> Connection: ...

    def close(self) -> None: ...


class Warehouse(Protocol):
    """One warehouse on one engine."""

    path: Path
    errors: tuple[type[BaseException], ...]  # the engine's own exceptions
    # Whether several processes may write at once (over disjoint days): the planner runs
    # up to --max-concurrency chunks in parallel only then.
    concurrent_writers: bool
    name: str  # the engine's name, as DBT_TARGET names it
    # Whether several statements commit together: cutover's checked switch and the
    # preview's kept chunks are built on it; an engine without it refuses them by name.
    transactions: bool
    # Whether what one process keeps (a restatement preview's chunks and record) is there
    # for the next: DuckDB's file, a Spark cluster's metastore; not a Spark in each process
    # (its catalog is in memory, registered again per process from the published folders).
    keeps_previews: bool

    @staticmethod
    def is_transient_error(error: BaseException) -> bool:
        """Whether a retry after a pause can help an error the engine raised."""
        ...

    def exists(self) -> bool: ...

    def check_readable(self) -> None:
        """Refuse, in one line, a warehouse a reader cannot read; creates nothing."""
        ...

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
        """Hold the warehouse for a write (or a read), bounded by `wait_seconds`."""
        ...

    def start_session(self) -> None:
        """Start this process's engine session now (Spark: the JVM, tens of seconds), so a
        worker pays it once, before its first chunk; reads and writes nothing."""
        ...

    def live_waiting(self) -> bool:
        """Whether a live run (daily) waits for the warehouse now: history goes after it."""
        ...

    def builders(self) -> list:
        """The runs building in the warehouse now, each a locking.Holder with its days
        (readers are not builders): on one writer, the lock's holder; on concurrent
        writers, every chunk holding its days. A holder that died holds nothing."""
        ...

    def read(
        self, *, reader: str = "read", wait_seconds: float = ..., on_wait: Callable | None = None
    ) -> contextlib.AbstractContextManager[Connection]:
        """A read-only connection under the lock protocol: a reader never fails a writer."""
        ...

    def connect(
        self, *, wait_seconds: float | None = None
    ) -> contextlib.AbstractContextManager[Connection]:
        """A short read-write connection for a writer that holds the lock."""
        ...

    def open(self, *, read_only: bool, wait_seconds: float) -> Connection:
        """A connection the caller closes (a transaction that outlives one block)."""
        ...


ENGINES: dict[str, type] = {
    "duckdb": DuckDBWarehouse,
    "spark": SparkWarehouse,
    "spark-cluster": SparkClusterWarehouse,
}
# Every engine's own exceptions (a caller that survives any warehouse failure catches these):
# neither list imports its engine's client library beyond what it has loaded already.
ENGINE_ERRORS: tuple[type[BaseException], ...] = DuckDBWarehouse.errors + SparkWarehouse.errors


def engine():
    """The engine refill runs on, as settings.engine_name() (DBT_TARGET) chooses it."""
    return ENGINES[settings.engine_name()]


def warehouse_at(path: Path | None = None) -> Warehouse:
    """The warehouse at `path` (default: settings.warehouse_path()) on refill's engine."""
    return engine()(settings.warehouse_path() if path is None else path)


def require_previews(warehouse: Warehouse, what: str) -> None:
    """Refuse, in one line, `what` on an engine where a preview cannot outlive its process."""
    if not warehouse.keeps_previews:
        raise UsageError(
            f"{what} needs a warehouse that keeps it between processes (DuckDB, or a Spark "
            f"cluster's metastore: DBT_TARGET=spark-cluster); not {warehouse.name}, whose "
            "catalog is each process's own: nothing was written"
        )


def is_transient(error: BaseException) -> bool:
    """Whether a retry after a pause can help: refill's own verdict on its errors (a lock
    held too long is transient: its holder finishes), the engine's on the ones it raised."""
    if isinstance(error, RefillError):
        return error.transient
    return any(known.is_transient_error(error) for known in ENGINES.values())
