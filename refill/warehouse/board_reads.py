"""The board's reads of the warehouse beyond partition_status.collect: the run log, the
outbox and the versioned marts (their totals per day, the version readers get).

Every function reads on a connection the caller opened through `ops.read_warehouse` (the
readers' protocol): none opens the file or takes the lock itself.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

from refill.rules import planning
from refill.rules.catalog import VersionedModel
from refill.warehouse.diff import quoted
from refill.warehouse.ops import OUTBOX_LATEST, RUN_LOG_LATEST, latest_per_key


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
class MartTotals:
    """A versioned mart as the warehouse holds it: its versions' totals per day, the
    version readers get (ops.version_pointer) and how many days each version published."""

    name: str
    served: int
    previous: int | None
    switched_at: datetime | None
    measure: str  # the headline measure summed per day ("rows" when it declares none)
    totals: dict[int, dict[date, Decimal]] = field(default_factory=dict)
    published_days: dict[int, int] = field(default_factory=dict)  # version -> days in the ledger
    missing_days: dict[int, int] = field(default_factory=dict)  # days `served` has, v lacks


def read_runs(connection, recent: int) -> list[RunEntry]:
    """The `recent` latest runs, and every run still marked running; newest first."""
    rows = connection.execute(
        "select run_id, command, command_line, parameters, started_at, ended_at, outcome, "
        "message from (select *, row_number() over (order by started_at desc) as recency "
        f"from {RUN_LOG_LATEST}) as runs where recency <= ? or outcome = 'running' "
        "order by started_at desc",
        [recent],
    ).fetchall()
    runs = []
    for run_id, command, line, parameters, started, ended, outcome, message in rows:
        try:
            parsed = json.loads(parameters) if parameters else {}
        except ValueError:
            parsed = {}
        runs.append(RunEntry(run_id, command, line, parsed, started, ended, outcome, message))
    return runs


def read_notices(connection, start: date, end: date, recent: int) -> list[Notice]:
    """The notifications about each day from `start` to `end`, and the `recent` latest ones
    about whole runs; newest first."""
    columns = "idempotency_key, flow_name, logical_date, outcome, message, created_at, sent_at"
    per_day = connection.execute(
        f"select {columns} from {OUTBOX_LATEST} "
        "where logical_date between ? and ? order by created_at desc",
        [start, end],
    ).fetchall()
    per_run = connection.execute(
        f"select {columns} from {OUTBOX_LATEST} "
        "where logical_date is null order by created_at desc limit ?",
        [recent],
    ).fetchall()
    return sorted((Notice(*row) for row in per_day + per_run), key=lambda n: n.created_at)[::-1]


# ops.version_pointer, one row per model: its latest move (Spark appends one row per switch).
VERSION_POINTER_LATEST = latest_per_key("ops.version_pointer", "model_name", "switched_at desc")


def read_versioned_marts(
    connection, start: date, end: date, declared: Sequence[VersionedModel] = ()
) -> list[MartTotals]:
    """The versioned marts the pointer knows (ops.version_pointer, made by macros/versions/),
    with each version's totals from `start` to `end`: the sum of its headline measure per
    day of its partition column, as `declared` (the catalog's versioned models) names them;
    rows per day of its first date column for a mart the project no longer declares.
    Empty when this warehouse has no versioned marts: the board then leaves them out."""
    declarations = {versioned.name: versioned for versioned in declared}
    if not _relation_exists(connection, "ops", "version_pointer"):
        return []
    pointers = connection.execute(
        "select model_name, current_version, previous_version, switched_at "
        f"from {VERSION_POINTER_LATEST} order by model_name"
    ).fetchall()
    marts = []
    for name, current, previous, switched_at in pointers:
        mart = MartTotals(name, int(current), previous, switched_at, "rows")
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
            declaration = declarations.get(name)
            day_column = declaration.partition_column if declaration else None
            if day_column not in columns:
                day_column = next((c for c, t in columns.items() if t == "DATE"), None)
            if day_column is None:
                continue
            headline = declaration.measures[0] if declaration else None
            if headline in columns:
                mart.measure, total = headline, f"coalesce(sum({quoted(headline)}), 0)"
            else:
                total = "count(*)"
            rows = connection.execute(
                f'select "{day_column}", {total} from "{schema}"."{table}" '
                f'where "{day_column}" between ? and ? group by 1',
                [start, end],
            ).fetchall()
            mart.totals[version] = {day: Decimal(value) for day, value in rows}
            days = _ledger_days(connection, table)
            mart.published_days[version] = len(days)
            mart.missing_days[version] = len(served_days - days)
        marts.append(mart)
    return marts


def _relation_exists(connection, schema: str, name: str) -> bool:
    (count,) = connection.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, name],
    ).fetchone()
    return count > 0


def _ledger_days(connection, model_name: str) -> set[date]:
    rows = connection.execute(
        "select partition_date from ops.partition_ledger "
        "where model_name = ? and status = 'published'",
        [model_name],
    ).fetchall()
    return {day for (day,) in rows}
