"""`refill board`: the partition board, a picture of the data `refill status` prints.

A row per day, a lamp per step of its run (ready, building, audited, published), its
rows against the source, code version and run, its events per hour, the versioned marts'
totals and which version readers get, and the run going on now. The days come from
`partition_status.collect` (through `status.collect_for`, the one query layer `refill
status` reads too); the board adds only what a picture needs: every attempt, the run
log, the outbox, events per hour, the version pointer and the warehouse lock's holder.

The page is one self-contained HTML file: style and script inline, lamps and strips
inline SVG, nothing fetched when it is opened from disk. `--serve` (refill/views/board_server.py)
adds a poll of its own server so the page reloads while a run moves across it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import html
import json
import logging
import re
import string
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from refill import settings
from refill.rules import planning
from refill.rules.planning import DayState
from refill.views import status
from refill.warehouse import locking, ops
from refill.warehouse.partition_status import DayStatus

STEPS = ("ready", "building", "audited", "published")
# Lamp states: a lamp is lit, hollow (not started), crossed (failed), a clock (waiting:
# for the file, or for a retry), pulsing (building now) or amber (published, but stale).
ON, OFF, FAILED, WAITING, ACTIVE, STALE = "on", "off", "failed", "waiting", "active", "stale"
LAMP_STATES = (ON, OFF, FAILED, WAITING, ACTIVE, STALE)
LAMP_EMOJI = {ON: "🟢", OFF: "⚪", FAILED: "❌", WAITING: "⏳", ACTIVE: "🔵", STALE: "🟠"}

# The lamp a failed attempt stopped at, from the step the run recorded (ops.partition_attempts
# .failed_step): readiness refused by dbt, the build, the audits, publishing (the ledger);
# an interrupted run, a lock it never got or anything else stops at the build.
STEP_LAMPS = {
    "readiness": "ready",
    "build": "building",
    "audit": "audited",
    "publish": "published",
    "interrupted": "building",
    "lock": "building",
    "other": "building",
}
# An attempt recorded before failed_step existed: its message says when the audits failed
# (macros/audits raise "refill audit: ...").
AUDIT_FAILURE = re.compile(r"refill audit")
# Fewer empty hours in a row are a quiet spell, not an outage (`refill gaps`' default).
MIN_HOLE_HOURS = settings.MIN_HOLE_HOURS
# A run log row still "running" whose liveness nobody can tell (ops.run_is_alive says None)
# counts as running this long after it started, no longer.
ACTIVE_RUN_LIMIT = timedelta(hours=6)
INTERRUPTED_NOTE = "its process ended without closing the run (killed or interrupted)"
RECENT_RUNS = 8
RECENT_NOTICES = 5
DEFAULT_LOCK_WAIT_SECONDS = settings.COMMAND_LOCK_WAIT_SECONDS
# The artifact waits at most this for a build of another run (it is taken between chunks).
ARTIFACT_LOCK_WAIT_SECONDS = 30.0
ARTIFACT_DAYS = 7

log = logging.getLogger("refill.board")


# -- what the board shows -------------------------------------------------------------------


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


@dataclass(frozen=True)
class RunEntry:
    """A row of ops.run_log."""

    run_id: str
    command: str
    command_line: str
    parameters: dict
    started_at: datetime
    ended_at: datetime | None
    outcome: str
    message: str | None
    alive: bool | None = None  # for a "running" row: is its process alive (None: unknown)

    def days(self) -> set[date]:
        """The logical dates the run was asked to build."""
        params = self.parameters
        with contextlib.suppress(KeyError, TypeError, ValueError):
            if "logical_date" in params:
                return {date.fromisoformat(str(params["logical_date"]))}
            if "start" in params and "end" in params:
                window = planning.DateRange(
                    date.fromisoformat(str(params["start"])), date.fromisoformat(str(params["end"]))
                )
                return set(window.days)
        return set()

    def describe(self) -> str:
        return (
            f"{self.command_line} (run {self.run_id}, started {self.started_at:%Y-%m-%d %H:%M} UTC)"
        )


@dataclass(frozen=True)
class Notice:
    """A row of ops.notification_outbox."""

    key: str
    flow_name: str
    logical_date: date | None
    outcome: str
    message: str
    created_at: datetime
    sent_at: datetime | None


@dataclass
class VersionedMart:
    """A versioned mart: its versions' totals per day and the version readers get."""

    name: str
    served: int
    previous: int | None
    switched_at: datetime | None
    measure: str  # the column summed per day ("rows" when the mart has no revenue_usd)
    totals: dict[int, dict[date, Decimal]] = field(default_factory=dict)
    published_days: dict[int, int] = field(default_factory=dict)  # version -> days in the ledger
    missing_days: dict[int, int] = field(default_factory=dict)  # days `served` has, v lacks

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
    holder: locking.Holder | None = None  # who holds the warehouse now (building), if anyone


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

    def lamp(self, step: str) -> Lamp:
        return next(lamp for lamp in self.lamps if lamp.step == step)

    def flag_names(self) -> list[str]:
        return [flag.name for flag in self.flags]

    @property
    def needs_attention(self) -> bool:
        return self.state != DayState.PUBLISHED or any(
            lamp.state in (FAILED, WAITING, ACTIVE, STALE) for lamp in self.lamps
        )


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
    holder: locking.Holder | None
    warehouse: str
    statuses: list[DayStatus] = field(default_factory=list, repr=False)
    extras: Extras = field(default_factory=Extras, repr=False)
    current_code_versions: dict[str, str] | None = field(default=None, repr=False)

    @property
    def building_days(self) -> list[date]:
        return [row.day for row in self.rows if row.lamp("building").state == ACTIVE]


# -- reads ------------------------------------------------------------------------------------


def live_holder(warehouse: Path) -> locking.Holder | None:
    """The run building in the warehouse now, if any (a reader, such as a board reading,
    is not one). The lock is an OS lock: a holder that died holds nothing."""
    holder = locking.read_holder(warehouse)
    if holder is None or holder.priority == locking.READ:
        return None
    return holder


def read_extras(warehouse: Path, window: planning.DateRange, connection=None) -> Extras:
    """Every attempt, the run log, the outbox, the data-as-of and the versioned marts, on
    `connection` when given, else through a read of their own (ops.read_warehouse)."""
    if connection is None:
        with ops.read_warehouse(warehouse, reader="board") as own:
            return read_extras(warehouse, window, own)
    extras = Extras()
    if not ops.has_ops(connection):
        return extras
    extras.attempts = ops.read_attempts(connection, window.start, window.end)
    extras.runs = [_with_liveness(run, warehouse) for run in _read_runs(connection)]
    extras.notices = _read_notices(connection, window)
    extras.data_as_of = ops.read_data_as_of(connection)
    extras.marts = _read_versioned_marts(connection, window)
    extras.hourly = status.read_hourly_counts(window, connection)
    return extras


def _with_liveness(run: RunEntry, warehouse: Path) -> RunEntry:
    """A "running" row whose process is gone is shown as what it is: interrupted."""
    if run.outcome != "running":
        return run
    alive = ops.run_is_alive(warehouse, run.run_id)
    if alive is False:
        return replace(run, outcome="interrupted", message=run.message or INTERRUPTED_NOTE)
    return replace(run, alive=alive)


def _read_runs(connection) -> list[RunEntry]:
    rows = connection.execute(
        "select run_id, command, command_line, parameters, started_at, ended_at, outcome, "
        "message from ops.run_log "
        "qualify row_number() over (order by started_at desc) <= ? or outcome = 'running' "
        "order by started_at desc",
        [RECENT_RUNS],
    ).fetchall()
    runs = []
    for run_id, command, line, parameters, started, ended, outcome, message in rows:
        try:
            parsed = json.loads(parameters) if parameters else {}
        except ValueError:
            parsed = {}
        runs.append(RunEntry(run_id, command, line, parsed, started, ended, outcome, message))
    return runs


def _read_notices(connection, window: planning.DateRange) -> list[Notice]:
    """The window's notifications per day, and the latest ones about whole runs."""
    columns = "idempotency_key, flow_name, logical_date, outcome, message, created_at, sent_at"
    per_day = connection.execute(
        f"select {columns} from ops.notification_outbox "
        "where logical_date between ? and ? order by created_at desc",
        [window.start, window.end],
    ).fetchall()
    per_run = connection.execute(
        f"select {columns} from ops.notification_outbox "
        "where logical_date is null order by created_at desc limit ?",
        [RECENT_NOTICES],
    ).fetchall()
    return sorted((Notice(*row) for row in per_day + per_run), key=lambda n: n.created_at)[::-1]


def _relation_exists(connection, schema: str, name: str) -> bool:
    (count,) = connection.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, name],
    ).fetchone()
    return count > 0


def _read_versioned_marts(connection, window: planning.DateRange) -> list[VersionedMart]:
    """The versioned marts the pointer knows (ops.version_pointer, made by macros/versions/).
    None when this warehouse has no versioned marts: the board then leaves them out."""
    if not _relation_exists(connection, "ops", "version_pointer"):
        return []
    pointers = connection.execute(
        "select model_name, current_version, previous_version, switched_at "
        "from ops.version_pointer order by model_name"
    ).fetchall()
    marts = []
    for name, current, previous, switched_at in pointers:
        mart = VersionedMart(name, int(current), previous, switched_at, "rows")
        tables = connection.execute(
            "select table_schema, table_name from information_schema.tables "
            "where table_type = 'BASE TABLE' and table_schema <> 'ops' and table_name like ?",
            [f"{name}_v%"],
        ).fetchall()
        served_days = _ledger_days(connection, f"{name}_v{current}")
        for schema, table in tables:
            match = re.fullmatch(rf"{re.escape(name)}_v(\d+)", table)
            if not match:
                continue
            version = int(match.group(1))
            columns = dict(
                connection.execute(
                    "select column_name, data_type from information_schema.columns "
                    "where table_schema = ? and table_name = ? order by ordinal_position",
                    [schema, table],
                ).fetchall()
            )
            day_column = "event_date" if "event_date" in columns else None
            day_column = day_column or next((c for c, t in columns.items() if t == "DATE"), None)
            if day_column is None:
                continue
            if "revenue_usd" in columns:
                mart.measure, total = "revenue_usd", 'coalesce(sum("revenue_usd"), 0)'
            else:
                total = "count(*)"
            rows = connection.execute(
                f'select "{day_column}", {total} from "{schema}"."{table}" '
                f'where "{day_column}" between ? and ? group by 1',
                [window.start, window.end],
            ).fetchall()
            mart.totals[version] = {day: Decimal(value) for day, value in rows}
            days = _ledger_days(connection, table)
            mart.published_days[version] = len(days)
            mart.missing_days[version] = len(served_days - days)
        marts.append(mart)
    return marts


def _ledger_days(connection, model_name: str) -> set[date]:
    rows = connection.execute(
        "select partition_date from ops.partition_ledger "
        "where model_name = ? and status = 'published'",
        [model_name],
    ).fetchall()
    return {day for (day,) in rows}


def snapshot(
    project, window: planning.DateRange, lock_wait_seconds: float = DEFAULT_LOCK_WAIT_SECONDS
) -> Board:
    """Read the board for `window` (statuses through the one query layer, then the extras)."""
    warehouse = settings.warehouse_path()
    ops.check_readable(warehouse)  # before dbt parses (which makes the folder for a build)
    versions = project.code_versions()
    project.resolve_selection(None)  # parsed before the read, not while holding the lock
    with ops.read_warehouse(warehouse, reader="board", wait_seconds=lock_wait_seconds) as c:
        statuses = status.collect_for(project, window, connection=c)
        extras = read_extras(warehouse, window, c)
    return assemble(
        statuses,
        extras,
        window=window,
        now=ops.utc_now(),
        current_code_versions=versions,
        warehouse=str(warehouse),
    )


# -- the decisions: pure functions of what was read -------------------------------------------


def assemble(
    statuses: list[DayStatus],
    extras: Extras | None = None,
    *,
    window: planning.DateRange | None = None,
    now: datetime | None = None,
    current_code_versions: dict[str, str] | None = None,
    warehouse: str = "",
    retry_delays: list[float] | None = None,
) -> Board:
    """The board of `statuses` and `extras`: a row per day, lamps, flags, totals."""
    extras = extras or Extras()
    now = now or ops.utc_now()
    if window is None:
        days = [s.day for s in statuses] or [now.date()]
        window = planning.DateRange(min(days), max(days))
    if retry_delays is None:
        from refill.settings import RETRY_DELAY_SECONDS as DEPLOYMENT_RETRY_DELAYS

        retry_delays = list(DEPLOYMENT_RETRY_DELAYS)
    holder = extras.holder
    active = [
        run
        for run in extras.runs
        if run.outcome == "running"
        and (
            (holder is not None and holder.run_id == run.run_id)
            or run.alive is True
            or (run.alive is None and now - run.started_at <= ACTIVE_RUN_LIMIT)
        )
    ]
    holes = status.find_hour_holes(extras.hourly, MIN_HOLE_HOURS)
    rows = [
        _row(
            day_status,
            extras,
            active,
            [hole for hole in holes if hole.day == day_status.day],
            current_code_versions or {},
            retry_delays,
        )
        for day_status in statuses
    ]
    return Board(
        window=window,
        generated_at=now,
        rows=rows,
        data_as_of=_data_as_of_lines(extras),
        active_runs=active,
        recent_runs=extras.runs[:RECENT_RUNS],
        run_notices=[n for n in extras.notices if n.logical_date is None][:RECENT_NOTICES],
        marts=extras.marts,
        holder=holder,
        warehouse=warehouse,
        statuses=statuses,
        extras=extras,
        current_code_versions=current_code_versions,
    )


def with_holder(board: Board, holder: locking.Holder | None, now: datetime | None = None) -> Board:
    """The same board with another lock holder: what moves while the warehouse is busy."""
    extras = replace(board.extras, holder=holder)
    return assemble(
        board.statuses,
        extras,
        window=board.window,
        now=now or ops.utc_now(),
        current_code_versions=board.current_code_versions,
        warehouse=board.warehouse,
    )


def _data_as_of_lines(extras: Extras) -> list[str]:
    """As readers see it: a versioned mart under its consumer name, at the version served."""
    served = {f"{m.name}_v{m.served}": m for m in extras.marts}
    versions = {f"{m.name}_v{v}" for m in extras.marts for v in m.versions}
    lines = []
    for model, as_of, published in extras.data_as_of:
        if model in versions and model not in served:
            continue  # a version readers do not get
        name = f"{served[model].name} (v{served[model].served})" if model in served else model
        lines.append(f"{name} complete through {as_of} (published {published:%Y-%m-%d %H:%M} UTC)")
    return lines or ["nothing published yet"]


def _row(
    day_status: DayStatus,
    extras: Extras,
    active: list[RunEntry],
    holes: list[status.HourHole],
    current_code_versions: dict[str, str],
    retry_delays: list[float],
) -> BoardRow:
    day = day_status.day
    facts = day_status.facts
    quarantine = day_status.ledger.get("payments_quarantine")
    attempts = extras.attempts.get(day, [])
    holder = extras.holder
    building_now = holder is not None and str(day) in holder.partitions
    active_ids = {run.run_id for run in active}
    lamps = [
        _ready_lamp(day_status, attempts, active),
        *_build_lamps(
            day_status,
            attempts,
            building_now,
            holder,
            active_ids,
            retry_delays,
            current_code_versions,
        ),
    ]

    published = facts.rows_written if facts else None
    source = facts.source_records if facts else day_status.readiness.manifest_records
    quarantined = quarantine.rows_written if quarantine else None
    duplicates = None
    if facts and quarantine and facts.source_records is not None:
        duplicates = facts.source_records - facts.rows_written - quarantine.rows_written

    publishing = next(
        (
            a
            for a in reversed(attempts)
            if facts and a.run_id == facts.run_id and a.outcome == "published"
        ),
        None,
    )
    if publishing:
        run_label = f"{publishing.command} · attempt {publishing.attempt}"
    elif facts:
        run_label = "backfill" if facts.is_backfill else "dbt build"
    else:
        run_label = "-"

    counts = extras.hourly.get(day, {})
    hourly = [counts.get(hour, 0) for hour in range(24)] if facts or counts else []
    revenue = [
        (mart, {v: mart.totals.get(v, {}).get(day) for v in mart.versions}) for mart in extras.marts
    ]
    return BoardRow(
        day=day,
        state=str(day_status.state),
        lamps=lamps,
        published_rows=published,
        source_records=source,
        quarantined=quarantined,
        duplicates=duplicates,
        code_version=facts.code_version if facts else None,
        current_code_version=current_code_versions.get("fct_payments"),
        run_id=facts.run_id if facts else None,
        run_label=run_label,
        is_backfill=bool(facts and facts.is_backfill),
        flags=_flags(day_status, attempts, lamps, holes, extras, current_code_versions),
        hourly=hourly,
        holes=holes,
        revenue=revenue,
        in_active_run=any(day in run.days() for run in active) or building_now,
    )


def _ready_lamp(day_status: DayStatus, attempts: list[ops.Attempt], active: list[RunEntry]) -> Lamp:
    verdict = day_status.readiness
    refused = _last_failed_build(day_status, attempts)
    if refused is not None and failure_step(refused) == "ready":
        return Lamp(
            "ready",
            FAILED,
            f"attempt {refused.attempt} of {refused.command} run {refused.run_id} refused it "
            f"at readiness at {refused.ended_at:%Y-%m-%d %H:%M:%S} UTC: {refused.message}",
        )
    if verdict.is_ready:
        return Lamp(
            "ready",
            ON,
            f"ready: _SUCCESS lists {verdict.manifest_files} file(s) and "
            f"{verdict.manifest_records} records, exported at {verdict.exported_at}",
        )
    for run in active:
        seconds = run.parameters.get("wait_for_ready_seconds")
        waits = (run.command == "daily" and seconds) or run.parameters.get("on_missing") == "wait"
        if waits and day_status.day in run.days():
            deadline = run.started_at + timedelta(seconds=float(seconds)) if seconds else None
            until = f", until {deadline:%H:%M} UTC at the latest" if deadline else ""
            return Lamp(
                "ready",
                WAITING,
                f"waiting for the file ({verdict.reason}): run {run.run_id} ({run.command}) "
                f"has been checking since {run.started_at:%H:%M} UTC{until}",
                deadline,
            )
    refused = [a for a in attempts if a.outcome == "not ready"]
    if refused:
        last = refused[-1]
        return Lamp(
            "ready",
            FAILED,
            f"not ready ({verdict.reason}): {last.command} run {last.run_id} refused to build it "
            f"at {last.ended_at:%Y-%m-%d %H:%M} UTC; rerun it when the file lands",
        )
    return Lamp("ready", OFF, f"not ready: {verdict.reason}")


def failure_step(attempt: ops.Attempt) -> str:
    """The lamp a failed attempt stopped at: from the step its run recorded, or for an
    attempt recorded before failed_step existed, from its message."""
    if attempt.failed_step is not None:
        return STEP_LAMPS.get(attempt.failed_step, "building")
    return "audited" if AUDIT_FAILURE.search(attempt.message or "") else "building"


def _last_failed_build(day_status: DayStatus, attempts: list[ops.Attempt]) -> ops.Attempt | None:
    """The day's latest build attempt when it failed after the data now published."""
    builds = [a for a in attempts if a.outcome in ("published", "failed")]
    last = builds[-1] if builds else None
    facts = day_status.facts
    if last is None or last.outcome != "failed":
        return None
    if facts is not None and last.ended_at <= facts.published_at:
        return None
    return last


def _build_lamps(
    day_status: DayStatus,
    attempts: list[ops.Attempt],
    building_now: bool,
    holder: locking.Holder | None,
    active_ids: set[str],
    retry_delays: list[float],
    current_code_versions: dict[str, str],
) -> list[Lamp]:
    """building, audited, published: how far the latest build of the day went."""
    facts = day_status.facts
    builds = [a for a in attempts if a.outcome in ("published", "failed")]
    last = builds[-1] if builds else None
    if facts is None:
        published = Lamp("published", OFF, "nothing published for this day")
    else:
        note = (
            f"published {facts.rows_written} rows by run {facts.run_id} at "
            f"{facts.published_at:%Y-%m-%d %H:%M} UTC"
        )
        if day_status.is_stale:
            reason = _stale_reason(day_status, current_code_versions)
            published = Lamp("published", STALE, f"{note}; stale: {reason}")
        else:
            published = Lamp("published", ON, note)

    if building_now:
        if facts is not None:
            published = replace(published, note=published.note + "; it stands while it rebuilds")
        return [
            Lamp("building", ACTIVE, f"building now: {holder.describe()}"),
            Lamp("audited", OFF, "the audits run when the build reaches them"),
            published,
        ]

    failed_last = (
        last is not None
        and last.outcome == "failed"
        and (facts is None or last.ended_at > facts.published_at)
    )
    if not failed_last:
        if last is not None:
            built = (
                f"built by {last.command} run {last.run_id}, attempt {last.attempt}, "
                f"{last.started_at:%Y-%m-%d %H:%M:%S}-{last.ended_at:%H:%M:%S} UTC"
            )
        elif facts is not None:
            built = f"built by run {facts.run_id} (a dbt build outside the flows)"
        else:
            return [
                Lamp("building", OFF, "not built yet"),
                Lamp("audited", OFF, "not audited yet"),
                published,
            ]
        return [
            Lamp("building", ON, built),
            Lamp("audited", ON, "audits passed: keys unique, every line accounted for, reconciled"),
            published,
        ]

    failure = (
        f"attempt {last.attempt} of {last.command} run {last.run_id} failed at "
        f"{last.ended_at:%Y-%m-%d %H:%M:%S} UTC: {last.message}"
    )
    if facts is not None:
        failure += f". The data published by run {facts.run_id} stands"
    state, retry_at = FAILED, None
    if last.run_id in active_ids:
        delay = retry_delays[min(last.attempt - 1, len(retry_delays) - 1)] if retry_delays else 0
        retry_at = last.ended_at + timedelta(seconds=delay)
        state = WAITING
        failure += (
            f". Next retry about {retry_at:%H:%M:%S} UTC (estimated: the last failure plus the "
            f"deployment's retry delay of {delay:g}s; a run started with its own --retry-delay "
            "waits that instead)"
        )
    stopped_at = failure_step(last)
    reached = {"ready": -1, "building": 0, "audited": 1, "published": 2}[stopped_at]
    passed = {
        "building": f"built in attempt {last.attempt} of run {last.run_id}",
        "audited": f"audits passed in attempt {last.attempt} of run {last.run_id}",
    }
    lamps = []
    for index, step in enumerate(("building", "audited", "published")):
        if reached < 0 and step == "published" and facts is not None:
            lamps.append(published)  # readiness refused the rebuild: the data stands
        elif reached < 0:
            lamps.append(Lamp(step, OFF, f"not reached: {failure}"))
        elif index < reached:
            lamps.append(Lamp(step, ON, passed[step]))
        elif index == reached:
            lamps.append(Lamp(step, state, failure, retry_at))
        elif step == "published" and facts is not None:
            lamps.append(published)
        else:
            lamps.append(Lamp(step, OFF, f"not reached: attempt {last.attempt} stopped before"))
    return lamps


def _stale_reason(
    day_status: DayStatus, current_code_versions: dict[str, str] | None = None
) -> str:
    facts = day_status.facts
    verdict = day_status.readiness
    reasons = []
    changed_source = [
        row
        for row in day_status.ledger.values()
        if row.source_fingerprint != verdict.source_fingerprint
    ]
    if changed_source:
        reasons.append(
            f"the source was re-exported (exported at {verdict.exported_at}) after it was published"
        )
    for model, row in sorted(day_status.ledger.items()):
        current = (current_code_versions or {}).get(model)
        if current and current != row.code_version:
            reasons.append(f"{model}'s code changed ({row.code_version} -> {current})")
    if not reasons:
        reasons.append("published from another source export or other code")
    day = facts.partition_date if facts else day_status.day
    return "; ".join(reasons) + f". Rebuild: refill backfill --start {day} --end {day} --yes"


def _flags(
    day_status: DayStatus,
    attempts: list[ops.Attempt],
    lamps: list[Lamp],
    holes: list[status.HourHole],
    extras: Extras,
    current_code_versions: dict[str, str],
) -> list[Flag]:
    day = day_status.day
    facts = day_status.facts
    states = {lamp.step: lamp for lamp in lamps}
    flags = []
    if states["building"].state == ACTIVE:
        flags.append(Flag("building", states["building"].note))
    if day_status.state == DayState.NOT_READY:
        flags.append(Flag("not ready", day_status.readiness.reason))
    if day_status.is_stale:
        flags.append(Flag("stale", _stale_reason(day_status, current_code_versions)))
    if day_status.was_late:
        refused = [a for a in attempts if a.outcome == "not ready"]
        first = refused[0] if refused else None
        when = f" at {first.ended_at:%Y-%m-%d %H:%M} UTC ({first.message})" if first else ""
        after = f"; published later by run {facts.run_id}" if facts else "; still not published"
        flags.append(Flag("late", f"not ready when its run came{when}{after}"))
    waiting = [lamp for lamp in lamps if lamp.step != "ready" and lamp.state == WAITING]
    failed = [
        lamp
        for lamp in lamps
        if lamp.state == FAILED and (lamp.step != "ready" or day_status.readiness.is_ready)
    ]
    if waiting:
        flags.append(Flag("retrying", waiting[0].note))
    elif failed:
        flags.append(Flag("failed", failed[0].note))
    else:
        builds = [a for a in attempts if a.outcome in ("published", "failed")]
        failures = [
            a
            for i, a in enumerate(builds)
            if a.outcome == "failed" and any(b.outcome == "published" for b in builds[i + 1 :])
        ]
        if failures:
            described = "; ".join(
                f"attempt {a.attempt} of run {a.run_id} failed at {a.ended_at:%H:%M:%S} UTC: "
                f"{a.message}"
                for a in failures
            )
            flags.append(Flag("retried", f"{described}; a later attempt published"))
    if facts and facts.is_backfill:
        flags.append(Flag("backfill", f"published by a backfill (run {facts.run_id})"))
    for hole in holes:
        flags.append(Flag("hole", f"{hole}: no events (streaming outage?)"))
    for notice in extras.notices:
        if notice.logical_date == day and notice.outcome != "succeeded":
            sent = "sent" if notice.sent_at else "not delivered yet"
            flags.append(Flag(f"notified {notice.outcome}", f"{notice.message} ({sent})"))
    return flags


# -- markdown: the Prefect artifact ------------------------------------------------------------


def summary_markdown(
    statuses: list[DayStatus],
    extras: Extras | None = None,
    *,
    window: planning.DateRange | None = None,
    now: datetime | None = None,
    current_code_versions: dict[str, str] | None = None,
) -> str:
    """The board as a markdown table: what the Prefect UI shows beside a run."""
    board = assemble(
        statuses, extras, window=window, now=now, current_code_versions=current_code_versions
    )
    return board_markdown(board)


def board_markdown(board: Board) -> str:
    lines = [f"## refill board {board.window}", ""]
    lines += [f"- data as of: {line}" for line in board.data_as_of]
    lines += [f"- running now: {run.describe()}" for run in board.active_runs]
    lines += [f"- {mart.describe()}" for mart in board.marts]
    legend = ", ".join(
        f"{LAMP_EMOJI[state]} {name}"
        for state, name in (
            (ON, "done"),
            (OFF, "not started"),
            (FAILED, "failed"),
            (WAITING, "waiting"),
            (ACTIVE, "building now"),
            (STALE, "stale"),
        )
    )
    lines += ["", f"lamps: {legend}", ""]
    header = ["day", "ready", "building", "audited", "published", "state", "rows / source"]
    header += ["quarantined", "duplicates", "code", "run"]
    for mart in board.marts:
        header += [f"{mart.name} v{v}" for v in mart.versions]
    header.append("flags")
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for row in board.rows:
        cells = [str(row.day)]
        cells += [LAMP_EMOJI[lamp.state] for lamp in row.lamps]
        cells += [row.state, _rows_vs_source(row), _number(row.quarantined)]
        cells += [_number(row.duplicates), row.code_version or "-"]
        cells.append(f"{row.run_label} {row.run_id[:8]}" if row.run_id else "-")
        for mart, totals in row.revenue:
            for version, total in totals.items():
                text = _money(total)
                cells.append(f"**{text}** (served)" if version == mart.served else text)
        cells.append(", ".join(row.flag_names()) or "-")
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    problems = [
        (row.day, flag) for row in board.rows for flag in row.flags if flag.name != "backfill"
    ]
    if problems:
        lines += ["", "### why"]
        lines += [f"- {day} **{flag.name}**: {flag.note}" for day, flag in problems]
    lines += ["", f"_generated {board.generated_at:%Y-%m-%d %H:%M:%S} UTC by `refill board`_"]
    return "\n".join(lines) + "\n"


def week_ending(day: date, days: int = ARTIFACT_DAYS) -> planning.DateRange:
    """The days a daily run's artifact shows: its logical date and the six before it."""
    return planning.DateRange(day - timedelta(days=days - 1), day)


def publish_artifact(
    window: planning.DateRange, key: str = "refill-board", description: str | None = None
):
    """Publish the board of `window` as a markdown artifact of the current Prefect run.

    Never fails the run: the picture of a run is not worth failing the run it shows.
    Returns the artifact's id, or None when it could not be made (logged as a warning).
    """
    logger = _run_logger()
    try:
        from prefect.artifacts import create_markdown_artifact

        from refill.warehouse.dbt_runner import shared_project

        board = snapshot(shared_project(), window, lock_wait_seconds=ARTIFACT_LOCK_WAIT_SECONDS)
        return create_markdown_artifact(
            markdown=board_markdown(board),
            key=key,
            description=description or f"refill board {window}",
        )
    except Exception as error:  # any failure here is reported, never raised
        logger.warning("the board artifact for %s was not published: %s", window, error)
        return None


def _run_logger():
    try:
        from prefect import get_run_logger

        return get_run_logger()
    except Exception:  # outside a flow run: the module's logger
        return log


# -- HTML -----------------------------------------------------------------------------------------


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _number(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _money(value: Decimal | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def _rows_vs_source(row: BoardRow) -> str:
    if row.published_rows is None and row.source_records is None:
        return "-"
    return f"{_number(row.published_rows)} / {_number(row.source_records)}"


_LAMP_SVG = {
    ON: '<circle cx="9" cy="9" r="7" class="fill"/>',
    OFF: '<circle cx="9" cy="9" r="6.2" class="ring"/>',
    FAILED: '<circle cx="9" cy="9" r="7" class="fill"/>'
    '<path d="M6 6 L12 12 M12 6 L6 12" class="mark"/>',
    WAITING: '<circle cx="9" cy="9" r="6.2" class="ring"/>'
    '<path d="M9 4.8 V9 L12 10.6" class="hand"/>',
    ACTIVE: '<circle cx="9" cy="9" r="7" class="fill"/><circle cx="9" cy="9" r="3" class="core"/>',
    STALE: '<circle cx="9" cy="9" r="7" class="fill"/>'
    '<path d="M9 5 V10 M9 12.2 V12.8" class="mark"/>',
}


def _lamp_html(lamp: Lamp) -> str:
    clock = f'<span class="at">{lamp.at:%H:%M}</span>' if lamp.state == WAITING and lamp.at else ""
    return (
        f'<span class="lamp lamp-{lamp.state}" data-step="{lamp.step}" data-state="{lamp.state}" '
        f'title="{_e(lamp.step + ": " + lamp.note)}">'
        f'<svg viewBox="0 0 18 18" width="18" height="18" role="img" aria-label="'
        f'{_e(lamp.step + " " + lamp.state)}">{_LAMP_SVG[lamp.state]}</svg>{clock}</span>'
    )


def _strip_html(row: BoardRow) -> str:
    if not row.hourly:
        return '<span class="muted">-</span>'
    peak = max(row.hourly) or 1
    hole_hours = {h for hole in row.holes for h in range(hole.first_hour, hole.last_hour + 1)}
    bars = []
    for hour, count in enumerate(row.hourly):
        height = 0 if count == 0 else max(2, round(22 * count / peak))
        tip = f"{hour:02d}:00-{hour + 1:02d}:00 UTC: {count} events"
        if hour in hole_hours:
            bars.append(
                f'<rect x="{hour * 5}" y="0" width="4" height="24" class="gap">'
                f"<title>{_e(tip)} (hole)</title></rect>"
            )
        bars.append(
            f'<rect x="{hour * 5}" y="{24 - height}" width="4" height="{height}" class="bar">'
            f"<title>{_e(tip)}</title></rect>"
        )
    label = "".join(
        f'<span class="hole-label">{_e(f"{h.first_hour:02d}-{h.last_hour + 1:02d}h empty")}</span>'
        for h in row.holes
    )
    return (
        f'<svg class="strip" data-holes="{len(hole_hours)}" viewBox="0 0 120 24" width="96" '
        f'height="24" preserveAspectRatio="none" role="img" aria-label="events per hour">'
        f"{''.join(bars)}</svg>{label}"
    )


def _revenue_html(row: BoardRow) -> str:
    if not row.revenue:
        return ""
    if all(total is None for _, totals in row.revenue for total in totals.values()):
        return '<span class="muted">-</span>'
    blocks = []
    for mart, totals in row.revenue:
        lines = []
        served_total = totals.get(mart.served)
        for version, total in totals.items():
            classes = "ver served" if version == mart.served else "ver"
            delta = ""
            if version != mart.served and total is not None and served_total:
                change = (total - served_total) / served_total * 100
                delta = f' <span class="delta">{change:+.1f}%</span>'
            marker = ' <span class="tag">served</span>' if version == mart.served else ""
            lines.append(
                f'<div class="{classes}" data-version="{version}" '
                f'title="{_e(f"{mart.name} v{version}: {mart.measure} {_money(total)}")}">'
                f"v{version} {_money(total)}{delta}{marker}</div>"
            )
        blocks.append(f'<div class="mart" data-mart="{_e(mart.name)}">{"".join(lines)}</div>')
    return "".join(blocks)


def _row_html(row: BoardRow) -> str:
    flags = "".join(
        f'<span class="flag flag-{_e(flag.name.split()[0])}" title="{_e(flag.note)}">'
        f"{_e(flag.name)}</span>"
        for flag in row.flags
    )
    code = row.code_version or "-"
    code_title = f"fct_payments code version {code}"
    if (
        row.code_version
        and row.current_code_version
        and row.code_version != row.current_code_version
    ):
        code_title += f" (current code: {row.current_code_version})"
    run = (
        f'<span title="run {_e(row.run_id)}">{_e(row.run_label)}<br>'
        f"<code>{_e(row.run_id[:12])}</code></span>"
        if row.run_id
        else "-"
    )
    classes = ["day", f"state-{row.state.replace(' ', '-')}"]
    if row.in_active_run:
        classes.append("in-run")
    revenue_cell = f'<td class="rev">{_revenue_html(row)}</td>' if row.revenue else ""
    lamps = "".join(f'<td class="lamp-cell">{_lamp_html(lamp)}</td>' for lamp in row.lamps)
    return (
        f'<tr class="{" ".join(classes)}" data-day="{row.day}" data-state="{_e(row.state)}" '
        f'data-flags="{_e(",".join(row.flag_names()))}" '
        f'data-attention="{1 if row.needs_attention else 0}">'
        f'<th scope="row">{row.day}<div class="weekday">{row.day:%a}</div></th>'
        f"{lamps}"
        f'<td class="state">{_e(row.state)}</td>'
        f'<td class="num" data-col="rows">{_e(_rows_vs_source(row))}</td>'
        f'<td class="num" data-col="quarantined">{_number(row.quarantined)}</td>'
        f'<td class="num" data-col="duplicates">{_number(row.duplicates)}</td>'
        f'<td class="hours">{_strip_html(row)}</td>'
        f"{revenue_cell}"
        f'<td data-col="code"><code title="{_e(code_title)}">{_e(code)}</code></td>'
        f'<td data-col="run">{run}</td>'
        f'<td class="flags">{flags}</td>'
        "</tr>"
    )


def _banner_html(board: Board) -> str:
    parts = []
    for run in board.active_runs:
        building = ", ".join(str(day) for day in board.building_days)
        now = f" · building {building}" if building else " · between steps"
        parts.append(
            f'<div class="banner running" data-run="{_e(run.run_id)}">'
            f'<span class="pulse"></span>running now: <b>{_e(run.command)}</b> '
            f"{_e(run.describe())}{_e(now)}</div>"
        )
    holder = board.holder
    if holder is not None and not any(run.run_id == holder.run_id for run in board.active_runs):
        building = f" · building {', '.join(holder.partitions)}" if holder.partitions else ""
        parts.append(
            f'<div class="banner running"><span class="pulse"></span>warehouse held by '
            f"{_e(holder.describe())}{_e(building)}</div>"
        )
    return "".join(parts)


def _marts_html(board: Board) -> str:
    if not board.marts:
        return ""
    items = "".join(
        f'<li data-mart="{_e(mart.name)}" data-served="{mart.served}" '
        f'data-pending="{",".join(map(str, mart.pending))}">{_e(mart.describe())}</li>'
        for mart in board.marts
    )
    return f'<section class="box"><h2>versioned marts</h2><ul class="marts">{items}</ul></section>'


def _runs_html(board: Board) -> str:
    if not board.recent_runs and not board.run_notices:
        return ""
    rows = "".join(
        f"<tr><td>{run.started_at:%Y-%m-%d %H:%M}</td><td>{_e(run.command)}</td>"
        f'<td class="outcome-{_e(run.outcome.replace(" ", "-"))}">{_e(run.outcome)}</td>'
        f"<td><code>{_e(run.command_line)}</code></td><td>{_e(run.message or '')}</td></tr>"
        for run in board.recent_runs
    )
    notices = "".join(
        f"<li>{n.created_at:%Y-%m-%d %H:%M} {_e(n.flow_name)} {_e(n.outcome)}: {_e(n.message)}</li>"
        for n in board.run_notices
    )
    notices_html = f'<h2>notifications</h2><ul class="notices">{notices}</ul>' if notices else ""
    return (
        '<section class="box runs"><h2>recent runs (ops.run_log)</h2>'
        "<table><thead><tr><th>started (UTC)</th><th>command</th><th>outcome</th>"
        f"<th>command line</th><th>message</th></tr></thead><tbody>{rows}</tbody></table>"
        f"{notices_html}</section>"
    )


_LAMP_HEADERS = "".join(
    f'<th class="lamp-head" title="{_e(tip)}">{name}</th>'
    for name, tip in (
        ("ready", "the landing's _SUCCESS manifest agrees with its files"),
        ("build", "the dbt build of the day's window"),
        ("audit", "the in-transaction audits: unique keys, every line accounted for"),
        ("publish", "published in ops.partition_ledger"),
    )
)

_LEGEND = "".join(
    _lamp_html(Lamp("legend", state, text)) + f'<span class="legend-text">{text}</span>'
    for state, text in (
        (ON, "done"),
        (OFF, "not started"),
        (FAILED, "failed (hover: why)"),
        (WAITING, "waiting (file or next retry)"),
        (ACTIVE, "building now"),
        (STALE, "published, stale"),
    )
)

_CSS = """
:root { --ok: #1f9d55; --off: #9aa5b1; --bad: #d64545; --wait: #d9822b; --run: #2680c2;
        --stale: #e0a100; --ink: #1f2933; --muted: #7b8794; --line: #e4e7eb; --bg: #f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; padding: 20px 24px; font: 13px/1.4 "DejaVu Sans", system-ui, sans-serif;
       color: var(--ink); background: var(--bg); }
header { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; }
h1 { font-size: 20px; margin: 0; }
h2 { font-size: 13px; margin: 0 0 6px; text-transform: uppercase; letter-spacing: .04em;
     color: var(--muted); }
.muted, .weekday { color: var(--muted); font-weight: normal; font-size: 11px; }
.asof { font-size: 14px; margin: 10px 0; padding: 8px 12px; background: #fff;
        border-left: 4px solid var(--ok); }
.asof div + div { margin-top: 2px; }
.box { background: #fff; padding: 10px 12px; margin: 10px 0; border: 1px solid var(--line); }
.marts { margin: 0; padding-left: 18px; }
.banner { margin: 8px 0; padding: 8px 12px; background: #e6f1fb;
          border-left: 4px solid var(--run); }
.pulse { display: inline-block; width: 9px; height: 9px; border-radius: 50%;
         background: var(--run); margin-right: 8px; animation: pulse 1.2s infinite; }
@keyframes pulse { 0% { opacity: 1; } 50% { opacity: .25; } 100% { opacity: 1; } }
.legend { display: flex; align-items: center; gap: 4px; flex-wrap: wrap; margin: 6px 0 10px; }
.legend-text { margin-right: 12px; color: var(--muted); }
.controls { margin-left: auto; color: var(--muted); }
.scroll { overflow-x: auto; }
table.board { border-collapse: collapse; width: 100%; background: #fff;
              border: 1px solid var(--line); }
table.board th, table.board td { padding: 5px 7px; border-bottom: 1px solid var(--line);
              vertical-align: middle; text-align: left; }
table.board thead th { background: #eef2f7; font-size: 11px; text-transform: uppercase;
              color: var(--muted); position: sticky; top: 0; }
table.board tbody tr:hover { background: #f9fbfd; }
tr.day th { white-space: nowrap; border-left: 4px solid transparent; }
tr.state-published th { border-left-color: var(--ok); }
tr.state-missing th { border-left-color: var(--off); }
tr.state-failed th { border-left-color: var(--bad); }
tr.state-stale th { border-left-color: var(--stale); }
tr.state-not-ready th { border-left-color: var(--wait); }
tr.in-run { background: #f0f7fd; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.lamp-cell, th.lamp-head { padding-left: 3px; padding-right: 3px; text-align: center; }
th.lamp-head { font-size: 10px; }
td[data-col="run"] { white-space: nowrap; }
.lamp { display: inline-flex; align-items: center; cursor: help; }
.legend .lamp { margin-right: 3px; }
.lamp svg { display: block; }
.lamp .fill { stroke: none; }
.lamp .ring { fill: none; stroke-width: 1.8; }
.lamp .mark { stroke: #fff; stroke-width: 2; stroke-linecap: round; }
.lamp .hand { fill: none; stroke: var(--wait); stroke-width: 1.8; stroke-linecap: round; }
.lamp-on .fill { fill: var(--ok); }
.lamp-off .ring { stroke: var(--off); }
.lamp-failed .fill { fill: var(--bad); }
.lamp-waiting .ring { stroke: var(--wait); }
.lamp-active .fill { fill: var(--run); animation: pulse 1.2s infinite; }
.lamp-active .core { fill: #fff; }
.legend .lamp-active .fill { animation: none; }
.lamp-stale .fill { fill: var(--stale); }
.lamp .at { font-size: 11px; color: var(--wait); margin-left: 2px; font-weight: bold; }
.strip { vertical-align: middle; }
.strip .bar { fill: #52606d; }
.strip .gap { fill: #fbd5d5; }
.hole-label { color: var(--bad); font-size: 11px; margin-left: 6px; white-space: nowrap; }
.rev .ver { white-space: nowrap; font-variant-numeric: tabular-nums; color: var(--muted); }
.rev .ver.served { color: var(--ink); font-weight: bold; }
.rev .tag { font-size: 10px; background: var(--ok); color: #fff; padding: 0 4px;
            border-radius: 3px; font-weight: normal; }
.rev .delta { font-size: 11px; }
.flag { display: inline-block; padding: 1px 6px; margin: 1px 2px; border-radius: 9px;
        background: #e4e7eb; font-size: 11px; cursor: help; white-space: nowrap; }
.flag-stale { background: #fff3c4; } .flag-late, .flag-not { background: #ffe8d9; }
.flag-failed { background: #ffe3e3; color: #a61b1b; } .flag-retried { background: #e3f8ff; }
.flag-retrying { background: #ffe8d9; } .flag-hole { background: #ffe3e3; }
.flag-backfill { background: #e6f1fb; } .flag-building { background: #e6f1fb; }
.runs table { border-collapse: collapse; width: 100%; }
.runs td, .runs th { text-align: left; padding: 3px 8px 3px 0; font-size: 12px;
                     border-bottom: 1px solid var(--line); }
.outcome-failed, .outcome-not-ready { color: var(--bad); }
.outcome-running { color: var(--run); }
.notices { margin: 0; padding-left: 18px; font-size: 12px; }
body.only-attention tr.day[data-attention="0"] { display: none; }
footer { margin-top: 12px; color: var(--muted); font-size: 11px; }
"""

# Inline and dependency-free. It fetches only when the page came from `refill board --serve`
# (data-poll set), never from disk.
_SCRIPT = """
(function () {
  var body = document.body;
  var toggle = document.getElementById("only-attention");
  if (toggle) {
    toggle.addEventListener("change", function () {
      body.classList.toggle("only-attention", toggle.checked);
    });
  }
  var poll = body.getAttribute("data-poll");
  if (!poll) { return; }
  var fingerprint = body.getAttribute("data-fingerprint");
  var every = 1000 * (Number(body.getAttribute("data-poll-seconds")) || 2);
  var live = document.getElementById("live");
  function check() {
    fetch(poll, { cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (state) {
        if (state && state.fingerprint !== fingerprint) { window.location.reload(); return; }
        if (live) { live.textContent = "live: checked " + new Date().toLocaleTimeString(); }
        window.setTimeout(check, every);
      })
      .catch(function () {
        if (live) { live.textContent = "server stopped: this is the last board it served"; }
      });
  }
  window.setTimeout(check, every);
})();
"""

_PAGE = string.Template(
    """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>refill board $window</title>
<style>$css</style>
</head>
<body$body_attributes>
<header><h1>refill board</h1><span class="muted">$window · $days day(s) · generated
$generated UTC · $warehouse</span><span class="muted" id="live">$live</span></header>
<section class="asof" data-as-of>$data_as_of</section>
$banner
$marts
<div class="legend">$legend<label class="controls"><input type="checkbox" id="only-attention">
only days that need attention</label></div>
<div class="scroll"><table class="board">
<thead><tr><th>day</th>$lamp_headers<th>state</th><th>rows / source</th><th>quarantined</th>
<th>duplicates</th>
<th>events per hour (UTC)</th>$revenue_header<th>code</th><th>run</th><th>flags</th></tr></thead>
<tbody>
$rows
</tbody>
</table></div>
$runs
<footer>lamps: ready (the landing's _SUCCESS manifest agrees with its files) · building
(the dbt build of its window) · audited (the in-transaction audits passed) · published
(ops.partition_ledger). Hover a lamp or a flag for the reason. Times are UTC.</footer>
<script>$script</script>
</body>
</html>
"""
)


def render_html(board: Board, poll_url: str | None = None, fingerprint: str = "") -> str:
    """The board as one self-contained HTML page. With `poll_url` (from --serve) the page
    checks that URL and reloads when the board's fingerprint changes."""
    attributes = ""
    if poll_url:
        attributes = (
            f' data-poll="{_e(poll_url)}" data-fingerprint="{_e(fingerprint)}" '
            f'data-poll-seconds="{2 if board.active_runs or board.holder else 3}"'
        )
    revenue_header = "".join(
        f'<th title="{_e(mart.describe())}">{_e(mart.name)} {_e(mart.measure)}<br>'
        + " / ".join(f"v{v}" for v in mart.versions)
        + "</th>"
        for mart in board.marts[:1]
    )
    return _PAGE.substitute(
        window=_e(board.window),
        days=len(board.rows),
        generated=f"{board.generated_at:%Y-%m-%d %H:%M:%S}",
        warehouse=_e(Path(board.warehouse).name if board.warehouse else ""),
        live="live" if poll_url else "",
        body_attributes=attributes,
        css=_CSS,
        data_as_of="".join(f"<div>data as of: {_e(line)}</div>" for line in board.data_as_of),
        banner=_banner_html(board),
        marts=_marts_html(board),
        legend=_LEGEND,
        revenue_header=revenue_header,
        lamp_headers=_LAMP_HEADERS,
        rows="\n".join(_row_html(row) for row in board.rows),
        runs=_runs_html(board),
        script=_SCRIPT,
    )


def fingerprint(board: Board) -> str:
    """What the page shows, without the time it was made: equal boards, equal prints."""
    page = render_html(replace(board, generated_at=datetime(2000, 1, 1)))
    return hashlib.sha256(page.encode()).hexdigest()[:16]


# -- the command ---------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`refill board` options."""
    parser.add_argument("--start", type=lambda raw: planning.parse_day("start", raw))
    parser.add_argument("--end", type=lambda raw: planning.parse_day("end", raw))
    parser.add_argument("--out", help="the HTML file to write (default board.html)")
    parser.add_argument(
        "--serve", action="store_true", help="serve it on 127.0.0.1; it reloads while runs move"
    )
    parser.add_argument(
        "--port", type=int, default=settings.BOARD_PORT, help="--serve port (0: any free one)"
    )
    parser.add_argument(
        "--lock-wait",
        type=float,
        default=DEFAULT_LOCK_WAIT_SECONDS,
        help="seconds to wait for a build in progress before reading the warehouse",
    )


def main(args: argparse.Namespace) -> int:
    """`refill board`: write the page, or serve it (--serve) until interrupted."""
    from refill.warehouse.dbt_runner import shared_project

    window = status.default_window(datetime.now(UTC).date(), args.start, args.end)
    project = shared_project()
    if args.serve:
        from refill.views import board_server

        print(f"refill board: serving {window} on 127.0.0.1 (Ctrl-C stops)", flush=True)
        board_server.serve(
            project, window, port=args.port, out=Path(args.out) if args.out else None
        )
        return 0
    out = Path(args.out or "board.html")
    print(f"refill board: {window} -> {out}", flush=True)
    board = snapshot(project, window, lock_wait_seconds=args.lock_wait)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(board), encoding="utf-8")
    attention = sum(1 for row in board.rows if row.needs_attention)
    print(f"refill board: wrote {out} ({len(board.rows)} days, {attention} need attention)")
    return 0
