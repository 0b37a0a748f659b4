"""What the board shows: its lamps, flags, rows and the reads they are drawn from.

Plain data, and how the board writes a number; the decisions that turn what was read into
lamps and flags are in `lamps` and `rows`, the read in `read`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

from refill.rules import planning
from refill.rules.planning import DayState
from refill.views import status
from refill.warehouse import locking, ops
from refill.warehouse.board_reads import MartTotals, Notice, RunEntry
from refill.warehouse.partition_status import DayStatus

STEPS = ("ready", "building", "audited", "published")
# Lamp states: a lamp is lit, hollow (not started), crossed (failed), a clock (waiting:
# for the file, or for a retry), pulsing (building now) or amber (published, but stale).
ON, OFF, FAILED, WAITING, ACTIVE, STALE = "on", "off", "failed", "waiting", "active", "stale"
LAMP_STATES = (ON, OFF, FAILED, WAITING, ACTIVE, STALE)

RECENT_RUNS = 8
RECENT_NOTICES = 5


@dataclass(frozen=True)
class Lamp:
    step: str  # one of STEPS
    state: str  # one of LAMP_STATES
    note: str  # the hover text: what happened, when, and why
    at: datetime | None = None  # for a clock: the time it waits for (next retry, deadline)


@dataclass(frozen=True)
class Flag:
    name: str
    note: str


@dataclass
class VersionedMart(MartTotals):
    """A versioned mart as the board tells it: which versions wait for a cutover, which are
    kept for a rollback."""

    @property
    def versions(self) -> list[int]:
        return sorted(set(self.totals) | set(self.published_days) | {self.served})

    @property
    def pending(self) -> list[int]:
        """Newer versions built beside the served one: a cutover not made yet."""
        return [v for v in self.versions if v > self.served and self.published_days.get(v)]

    def describe(self) -> str:
        since = f" since {self.switched_at:%Y-%m-%d %H:%M} UTC" if self.switched_at else ""
        parts = [f"{self.name}: readers get v{self.served}{since}"]
        for version in self.pending:
            missing = self.missing_days.get(version, 0)
            if missing:
                parts.append(
                    f"v{version} built for {self.published_days[version]} day(s), "
                    f"{missing} day(s) short of v{self.served}: backfill it before a cutover"
                )
            else:
                parts.append(
                    f"v{version} built for every day v{self.served} serves: cutover pending "
                    f"(refill cutover {self.name} --to {version})"
                )
        kept = [v for v in self.versions if v < self.served and self.published_days.get(v)]
        if kept:
            parts.append(", ".join(f"v{v}" for v in kept) + " kept for rollback")
        return "; ".join(parts)


@dataclass
class Extras:
    """What the board reads beyond partition_status.collect."""

    attempts: dict[date, list[ops.Attempt]] = field(default_factory=dict)  # oldest first
    runs: list[RunEntry] = field(default_factory=list)  # newest first
    notices: list[Notice] = field(default_factory=list)  # newest first
    hourly: dict[date, dict[int, int]] = field(default_factory=dict)
    data_as_of: list[tuple] = field(default_factory=list)  # (model, complete through, published)
    marts: list[VersionedMart] = field(default_factory=list)
    # who builds in the warehouse now, each with its days: the lock's one holder on DuckDB,
    # each chunk at once on Spark (Warehouse.builders); empty when nobody does
    builders: list[locking.Holder] = field(default_factory=list)


@dataclass(frozen=True)
class PreviewLink:
    """The latest unexpired restatement preview, shown above the board's rows: the page of
    its report (old vs new per day) is found from here."""

    preview_id: str
    start: date
    end: date
    expires_at: datetime
    page: str | None  # its report.html, when saved in the default folder (not --report-dir)


@dataclass
class BoardRow:
    day: date
    state: str
    lamps: list[Lamp]
    published_rows: int | None
    source_records: int | None
    quarantined: int | None
    duplicates: int | None
    code_version: str | None
    current_code_version: str | None
    run_id: str | None
    run_label: str  # "backfill · attempt 2", "daily", "-"
    is_backfill: bool
    flags: list[Flag]
    hourly: list[int]  # 24 counts; empty when nothing is published
    holes: list[status.HourHole]
    revenue: list[tuple[VersionedMart, dict[int, Decimal | None]]]
    in_active_run: bool
    facts_model: str = ""  # whose code version `code_version` is (the primary dataset's facts)

    def lamp(self, step: str) -> Lamp:
        return next(lamp for lamp in self.lamps if lamp.step == step)

    def flag_names(self) -> list[str]:
        return [flag.name for flag in self.flags]

    @property
    def needs_attention(self) -> bool:
        return self.state != DayState.PUBLISHED or any(
            lamp.state in (FAILED, WAITING, ACTIVE, STALE) for lamp in self.lamps
        )

    @property
    def rows_vs_source(self) -> str:
        if self.published_rows is None and self.source_records is None:
            return "-"
        return f"{number(self.published_rows)} / {number(self.source_records)}"


@dataclass
class Board:
    window: planning.DateRange
    generated_at: datetime
    rows: list[BoardRow]
    data_as_of: list[str]
    active_runs: list[RunEntry]
    recent_runs: list[RunEntry]
    run_notices: list[Notice]  # notifications about whole runs (no logical date)
    marts: list[VersionedMart]
    builders: list[locking.Holder]
    warehouse: str
    statuses: list[DayStatus] = field(default_factory=list, repr=False)
    extras: Extras = field(default_factory=Extras, repr=False)
    current_code_versions: dict[str, str] | None = field(default=None, repr=False)
    preview: PreviewLink | None = None  # the latest unexpired restatement preview

    @property
    def building_days(self) -> list[date]:
        return [row.day for row in self.rows if row.lamp("building").state == ACTIVE]


def days_label(builder: locking.Holder) -> str:
    """A builder's days as the board names them: one day, or a chunk first..last (two
    chunks building at once are two of these)."""
    days = sorted(builder.partitions)
    if len(days) > 1:
        return f"{days[0]}..{days[-1]}"
    return days[0] if days else ""


def number(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def money(value: Decimal | None) -> str:
    return "-" if value is None else f"{value:,.2f}"
