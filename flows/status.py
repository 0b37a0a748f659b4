"""`refill status` and `refill gaps`: the terminal views of partition_status.collect."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from flows import ops, partition_status, planning, settings
from flows.dbt_runner import DbtProject
from flows.planning import DayState

DEFAULT_DAYS = 14


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


def collect_for(project: DbtProject, window: planning.DateRange, select: str | None = None):
    selection = project.resolve_selection(select)
    return partition_status.collect(
        settings.warehouse_path(),
        settings.landing_root(),
        window,
        selection.models,
        project.code_versions(),
    )


def status_table(statuses: list[partition_status.DayStatus]) -> str:
    header = ("day", "ready", "state", "code", "rows / lines", "quarantined", "flags", "last run")
    # code: the fct_payments code version that published the day (the facts' lineage)
    rows = [header]
    for status in statuses:
        facts = status.facts
        quarantine = status.ledger.get("payments_quarantine")
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
                " ".join(flags) or "-",
                f"{attempt.command} {attempt.outcome} {attempt.ended_at:%Y-%m-%d %H:%M}"
                if attempt
                else "-",
            )
        )
    return format_table(rows)


def data_as_of_lines() -> list[str]:
    warehouse = settings.warehouse_path()
    if not warehouse.exists():
        return ["data as of: nothing published yet"]
    with ops.connect(warehouse, read_only=True) as connection:
        if not ops.has_ops(connection):
            return ["data as of: nothing published yet"]
        rows = ops.read_data_as_of(connection)
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


def read_hourly_counts(window: planning.DateRange) -> dict[date, dict[int, int]]:
    warehouse = settings.warehouse_path()
    if not warehouse.exists():
        return {}
    with ops.connect(warehouse, read_only=True) as connection:
        if not ops.has_ops(connection):
            return {}
        rows = connection.execute(
            "select event_date, hour(event_ts), count(*) from main.fct_payments "
            "where event_date between ? and ? group by 1, 2",
            [window.start, window.end],
        ).fetchall()
    hourly: dict[date, dict[int, int]] = {}
    for day, hour, count in rows:
        hourly.setdefault(day, {})[hour] = count
    return hourly


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
