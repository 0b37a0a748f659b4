"""The board's read of the warehouse: the days through the one query layer `refill status`
reads too (`status.collect_for`), then what only a picture needs (every attempt, the run
log, the outbox, events per hour, the versioned marts), in one read under the readers'
protocol (`ops.read_warehouse`: the warehouse lock as a reader, the file read-only)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from refill import settings
from refill.rules import planning
from refill.rules.catalog import Catalog
from refill.views import status
from refill.views.board import rows
from refill.views.board.model import (
    RECENT_NOTICES,
    RECENT_RUNS,
    Board,
    Extras,
    PreviewLink,
    VersionedMart,
)
from refill.warehouse import board_reads, locking, ops, preview_store
from refill.warehouse.board_reads import RunEntry
from refill.warehouse.dbt_runner import shared_project
from refill.warehouse.engine import warehouse_at
from refill.warehouse.partition_status import DayStatus

# A reading command waits this long for a build in progress (`refill board --lock-wait`).
DEFAULT_LOCK_WAIT_SECONDS = settings.COMMAND_LOCK_WAIT_SECONDS
INTERRUPTED_NOTE = "its process ended without closing the run (killed or interrupted)"
READER = "board"


def live_builders(warehouse: Path) -> list[locking.Holder]:
    """The runs building in the warehouse now, each with its days (a reader, such as a board
    reading, is not one): on DuckDB the lock's holder; on Spark every chunk at once
    (Warehouse.builders). The locks are OS locks: a holder that died holds nothing."""
    return warehouse_at(warehouse).builders()


def read_extras(
    warehouse: Path, window: planning.DateRange, connection=None, catalog: Catalog | None = None
) -> Extras:
    """Every attempt, the run log, the outbox, the data-as-of and the versioned marts, on
    `connection` when given, else through a read of their own (ops.read_warehouse). The
    events per hour are the primary dataset's, and the marts' measures as `catalog` (the
    project's, when not given) declares them."""
    if connection is None:
        with ops.read_warehouse(warehouse, reader=READER) as own:
            return read_extras(warehouse, window, own, catalog)
    catalog = catalog or shared_project().catalog
    extras = Extras()
    if not ops.has_ops(connection):
        return extras
    extras.attempts = ops.read_attempts(connection, window.start, window.end)
    runs = board_reads.read_runs(connection, RECENT_RUNS)
    extras.runs = [with_liveness(run, warehouse) for run in runs]
    extras.notices = board_reads.read_notices(connection, window.start, window.end, RECENT_NOTICES)
    extras.data_as_of = ops.read_data_as_of(connection)
    extras.marts = [
        VersionedMart(**vars(mart))
        for mart in board_reads.read_versioned_marts(
            connection, window.start, window.end, catalog.versioned
        )
    ]
    extras.hourly = status.read_hourly_counts(window, connection, catalog.primary)
    return extras


def with_liveness(run: RunEntry, warehouse: Path) -> RunEntry:
    """A "running" row whose process is gone is shown as what it is: interrupted."""
    if run.outcome != "running":
        return run
    alive = ops.run_is_alive(warehouse, run.run_id)
    if alive is False:
        return replace(run, outcome="interrupted", message=run.message or INTERRUPTED_NOTE)
    return replace(run, alive=alive)


def snapshot(
    project,
    window: planning.DateRange,
    lock_wait_seconds: float = DEFAULT_LOCK_WAIT_SECONDS,
    statuses: list[DayStatus] | None = None,
) -> Board:
    """Read the board for `window`: the days' statuses through the one query layer (or
    `statuses`, when the caller holds them already), then the extras, in one read."""
    warehouse = settings.warehouse_path()
    ops.check_readable(warehouse)  # before dbt parses (which makes the folder for a build)
    versions = project.code_versions()
    project.resolve_selection(None)  # parsed before the read, not while holding the lock
    with ops.read_warehouse(warehouse, reader=READER, wait_seconds=lock_wait_seconds) as c:
        if statuses is None:
            statuses = status.collect_for(project, window, connection=c)
        extras = read_extras(warehouse, window, c, project.catalog)
        latest = preview_store.latest_preview(c, ops.utc_now())
    board = rows.assemble(
        statuses,
        extras,
        window=window,
        now=ops.utc_now(),
        current_code_versions=versions,
        warehouse=str(warehouse),
    )
    return replace(board, preview=preview_link(latest))


def preview_link(latest: tuple | None) -> PreviewLink | None:
    """The board's pointer to the latest preview: its page where `--preview` saves it by
    default (settings.preview_report_dir), when it is there."""
    if latest is None:
        return None
    preview_id, start, end, expires_at = latest
    page = settings.preview_report_dir() / preview_id / "report.html"
    return PreviewLink(preview_id, start, end, expires_at, str(page) if page.exists() else None)
