"""`refill status` and `refill gaps`: the terminal views of partition_status.collect.

They are reading commands: they read the warehouse through ops.read_warehouse (never
making a writer fail), and a warehouse that is not there is an error naming its path."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from refill import settings
from refill.rules import planning
from refill.rules.catalog import Dataset
from refill.rules.planning import DayState
from refill.warehouse import ops, partition_status
from refill.warehouse.dbt_runner import DbtProject, shared_project

DEFAULT_DAYS = settings.STATUS_DAYS


@dataclass(frozen=True)
class HourHole:
    day: date
    first_hour: int
    last_hour: int  # inclusive

    @property
    def hours(self) -> int:
        return self.last_hour - self.first_hour + 1

    def __str__(self) -> str:
        return f"{self.day} {self.first_hour:02d}:00-{self.last_hour + 1:02d}:00 ({self.hours}h)"


def default_window(today: date, start: date | None, end: date | None) -> planning.DateRange:
    """The given range, or the last DEFAULT_DAYS days before today."""
    end = end or today - timedelta(days=1)
    start = start or end - timedelta(days=DEFAULT_DAYS - 1)
    return planning.parse_range(start, end)


def collect_for(
    project: DbtProject,
    window: planning.DateRange,
    select: str | None = None,
    connection=None,
):
    """The days of `window` as a reading command sees them (on `connection` when given)."""
    warehouse = settings.warehouse_path()
    if connection is None:
        ops.check_readable(warehouse)  # before dbt parses (which makes the folder for a build)
    selection = project.resolve_selection(select)
    versions = project.code_versions()
    with _reading(warehouse, connection, "status") as reading:
        return partition_status.collect(
            warehouse,
            settings.landing_root(),
            window,
            selection.models,
            versions,
            project.catalog,
            reading,
        )


@contextlib.contextmanager
def _reading(warehouse: Path, connection, reader: str) -> Iterator:
    """`connection` when the caller reads already; else a read of its own."""
    if connection is not None:
        yield connection
        return
    with ops.read_warehouse(warehouse, reader=reader, on_wait=_say_waiting) as own:
        yield own


def _say_waiting(holder) -> None:
    """A terminal command that waits for a build in progress says for whom, once."""
    print(f"refill: waiting for the warehouse, held by {holder.describe()}", file=sys.stderr)


def status_table(statuses: list[partition_status.DayStatus]) -> str:
    # code, rows, quarantined: the primary dataset's facts (their lineage) and rejects; a
    # second dataset adds its own rows / lines column after them
    others = (
        [d.name for d in statuses[0].catalog.datasets[1:]]
        if statuses and statuses[0].catalog
        else []
    )
    header = ("day", "ready", "state", "code", "rows / lines", "quarantined")
    header += tuple(f"{name} rows / lines" for name in others) + ("flags", "last run")
    rows = [header]
    for status in statuses:
        facts = status.facts
        quarantine = status.quarantine
        flags = []
        if status.is_stale:
            flags.append("stale")
        if status.was_late:
            flags.append("late")
        if facts and facts.is_backfill:
            flags.append("backfill")
        attempt = status.last_attempt
        rows.append(
            (
                str(status.day),
                "yes" if status.readiness.is_ready else f"no: {status.readiness.reason}",
                str(status.state),
                facts.code_version if facts else "-",
                f"{facts.rows_written} / {facts.source_records}" if facts else "-",
                str(quarantine.rows_written) if quarantine else "-",
                *(_rows_of(status.facts_of(name)) for name in others),
                " ".join(flags) or "-",
                f"{attempt.command} {attempt.outcome} {attempt.ended_at:%Y-%m-%d %H:%M}"
                if attempt
                else "-",
            )
        )
    return format_table(rows)


def _rows_of(facts) -> str:
    return f"{facts.rows_written} / {facts.source_records}" if facts else "-"


def data_as_of_lines(connection=None) -> list[str]:
    with _reading(settings.warehouse_path(), connection, "status") as reading:
        if not ops.has_ops(reading):
            return ["data as of: nothing published yet"]
        rows = ops.read_data_as_of(reading)
    if not rows:
        return ["data as of: nothing published yet"]
    return [
        f"data as of: {model} complete through {as_of} (published {published:%Y-%m-%d %H:%M} UTC)"
        for model, as_of, published in rows
    ]


def find_hour_holes(hourly: dict[date, dict[int, int]], min_hours: int) -> list[HourHole]:
    """Runs of at least `min_hours` empty hours with events before and after them in the
    same day: the footprint of a streaming outage, not of a quiet night at the edges."""
    holes = []
    for day, counts in sorted(hourly.items()):
        busy = [hour for hour in range(24) if counts.get(hour, 0) > 0]
        for before, after in zip(busy, busy[1:], strict=False):
            if after - before - 1 >= min_hours:
                holes.append(HourHole(day, before + 1, after - 1))
    return holes


def read_hourly_counts(
    window: planning.DateRange, connection=None, dataset: Dataset | None = None
) -> dict[date, dict[int, int]]:
    """Events per hour of each day in `dataset`'s facts (its `hours` column; the primary
    dataset of the project's catalog when not given); none when it declares no hours."""
    dataset = dataset or shared_project().catalog.primary
    if dataset.hours_column is None:
        return {}
    with _reading(settings.warehouse_path(), connection, "gaps") as reading:
        return ops.read_hourly_counts(reading, dataset, window.start, window.end)


@dataclass
class GapReport:
    days: dict[date, DayState]  # missing, failed or stale days
    holes: list[HourHole]
    not_ready: list[date]

    @property
    def days_to_fix(self) -> list[date]:
        return sorted(set(self.days) | {hole.day for hole in self.holes})

    def lines(self) -> list[str]:
        if not self.days and not self.holes:
            lines = ["no gaps: every ready day is published and current, no hour holes"]
        else:
            lines = [f"{day}  {state}" for day, state in sorted(self.days.items())]
            lines += [f"{hole}  no events (streaming outage?)" for hole in self.holes]
        if self.not_ready:
            lines.append("not ready (cannot be fixed yet): " + ", ".join(map(str, self.not_ready)))
        return lines


def find_gaps(statuses: list[partition_status.DayStatus], holes: list[HourHole]) -> GapReport:
    days = {s.day: s.state for s in statuses if s.state in planning.NEEDS_WORK}
    not_ready = [s.day for s in statuses if s.state == DayState.NOT_READY]
    return GapReport(days, holes, not_ready)


def format_table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)
