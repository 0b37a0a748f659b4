"""The warehouse boundary on DuckDB, refill's default engine: one file, one writing process.

DuckDB lets one process write a file, and only while no other process has it open; so the
lock protocol (refill.warehouse.locking) is a lock on the whole warehouse, connections are
short (a connection left open would lock out the next dbt invocation or another run), and
every read goes through `read` (under the lock, read-only), so a reader never makes a
writer fail.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import duckdb

from refill.errors import RefillError
from refill.warehouse import locking

# A writer outside refill's lock protocol (a read-write connection taken under the lock)
# waits this long by default for a process outside refill to close the file.
DEFAULT_OPEN_WAIT_SECONDS = 60.0


@dataclass(frozen=True)
class DuckDBWarehouse:
    """The DuckDB file at `path` (refill.warehouse.engine.Warehouse)."""

    path: Path

    # The engine's own exceptions: a caller that must survive any warehouse failure
    # (recording a run's outcome) catches these beside RefillError.
    errors: ClassVar[tuple[type[BaseException], ...]] = (duckdb.Error,)
    # One process writes the file: chunks run one at a time (DuckDB uses every core inside
    # each chunk).
    concurrent_writers: ClassVar[bool] = False
    name: ClassVar[str] = "duckdb"
    transactions: ClassVar[bool] = True
    keeps_previews: ClassVar[bool] = True

    @staticmethod
    def is_transient_error(error: BaseException) -> bool:
        """DuckDB's I/O errors (a file lock held by another process, a hiccup) can pass."""
        return isinstance(error, duckdb.IOException)

    def exists(self) -> bool:
        return self.path.exists()

    def check_readable(self) -> None:
        """A reading command's first step: refuse, in one line and before anything else runs,
        a warehouse that is missing, a folder or not a DuckDB file. Creates nothing."""
        locking.check_location(self.path, create=False)

    def lock(
        self,
        *,
        run_id: str,
        command: str,
        priority: str,
        partitions: list | None = None,
        wait_seconds: float = 900,
        on_wait: Callable | None = None,
    ) -> contextlib.AbstractContextManager[locking.Holder]:
        """The warehouse lock (refill.warehouse.locking.warehouse_lock)."""
        return locking.warehouse_lock(
            self.path,
            run_id=run_id,
            command=command,
            priority=priority,
            partitions=partitions,
            wait_seconds=wait_seconds,
            on_wait=on_wait,
        )

    def start_session(self) -> None:
        """DuckDB runs inside the process: nothing to start (and the file is not opened
        outside the lock protocol)."""

    def live_waiting(self) -> bool:
        return locking.live_waiter(self.path) is not None

    def builders(self) -> list[locking.Holder]:
        """The one writer's lock holder, unless it is a reader."""
        holder = locking.read_holder(self.path)
        return [] if holder is None or holder.priority == locking.READ else [holder]

    @contextlib.contextmanager
    def read(
        self,
        *,
        reader: str = "read",
        wait_seconds: float = locking.DEFAULT_READ_WAIT_SECONDS,
        on_wait: Callable | None = None,
    ) -> Iterator[duckdb.DuckDBPyConnection]:
        """refill's one way to read the warehouse: take the warehouse lock briefly (as a
        reader: a backfill lets it in between two chunks, a build in progress makes it wait,
        at most `wait_seconds`), open the file read-only, read, close, let go. A reader's
        connection never makes a writer fail, because no writer opens the file while a
        reader holds the lock. The warehouse must exist: a reader never creates the file or
        its folder, and a path that is missing, a folder or not a DuckDB file is refused in
        one line. `on_wait` is told once whom the read waits for (locking.warehouse_lock's)."""
        deadline = time.monotonic() + wait_seconds
        with self.lock(
            run_id=f"{reader}-{os.getpid()}",
            command=reader,
            priority=locking.READ,
            wait_seconds=wait_seconds,
            on_wait=on_wait,
        ):
            try:
                connection = self.open(read_only=True, wait_seconds=deadline - time.monotonic())
            except duckdb.ConnectionException:
                # This process writes it now (a read inside its own write): DuckDB allows one
                # configuration per file in a process, so read on a connection like the writer's.
                try:
                    connection = self.open(read_only=False, wait_seconds=0)
                except duckdb.ConnectionException as error:
                    raise RefillError(f"cannot read the warehouse {self.path}: {error}") from None
            try:
                yield connection
            finally:
                connection.close()

    @contextlib.contextmanager
    def connect(self, *, wait_seconds: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short read-write connection, for a writer that holds the warehouse lock; it
        waits (bounded) while a process outside refill has the file open, then says which."""
        connection = self.open(
            read_only=False,
            wait_seconds=DEFAULT_OPEN_WAIT_SECONDS if wait_seconds is None else wait_seconds,
        )
        try:
            yield connection
        finally:
            connection.close()

    def open(self, *, read_only: bool, wait_seconds: float) -> duckdb.DuckDBPyConnection:
        """A connection the caller closes. Raises WarehouseOpenElsewhere (naming the outside
        process) after `wait_seconds`, or RefillError when the file cannot be opened at all."""
        deadline = time.monotonic() + max(wait_seconds, 0)
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=read_only)
            except duckdb.IOException as error:
                outside = locking.file_holder(error)
                if outside is None:
                    raise RefillError(f"cannot open the warehouse {self.path}: {error}") from None
                if time.monotonic() >= deadline:
                    raise locking.WarehouseOpenElsewhere(
                        f"warehouse {self.path.name} is open in {outside.describe()}; waited "
                        f"{max(wait_seconds, 0):g}s. Retry when it closes the file",
                        holder=outside,
                    ) from None
                time.sleep(locking.FILE_POLL_SECONDS)
