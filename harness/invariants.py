"""The invariant checker: what must hold after every event, whatever happened.

The truth it checks against is not refill's: every time the harness writes a ready day,
the independent oracle (`tests.helpers.expected_day`, which parses the part files in
Python) records what that export should publish, keyed by the day's source fingerprint.
A ledger row names the fingerprint it was built from, so a partition is checked against
the export it claims, even after the day was re-exported.

Invariants (docs/harness.md says why each one matters):

- unique_transaction_id       no transaction_id appears twice in fct_payments
- reconciles_at_fingerprint   every published partition equals the oracle's truth for the
                              fingerprint its ledger row records (rows, amount, quarantine,
                              source records)
- ledger_matches_data         one ledger row per model and day, saying what the table holds;
                              no rows without a ledger row
- reader_sees_whole_publishes a concurrent reader saw, per day, only the publish before the
                              event or the one after it (or nothing before a first publish)
- lines_accounted             published + duplicate + quarantined = the manifest's records
- one_notification_per_key    one outbox row per idempotency key, delivered once
- rows_on_logical_date        every row sits on its logical date (its landed day)
- failed_run_changes_nothing  a run whose every attempt failed left the data as it was
- killed_run_converges        a killed command, run again, publishes what it was asked to
- lock_released               after an event, no lock file is left but a killed run's
- warehouse_opens             the warehouse can be read after every event, kills included
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb

from flows import locking, readiness
from flows.sample_data import DATASET
from tests.helpers import DayTruth, expected_day

INVARIANTS = (
    "unique_transaction_id",
    "reconciles_at_fingerprint",
    "ledger_matches_data",
    "reader_sees_whole_publishes",
    "lines_accounted",
    "one_notification_per_key",
    "rows_on_logical_date",
    "failed_run_changes_nothing",
    "killed_run_converges",
    "lock_released",
    "warehouse_opens",
)
CHECKED_MODELS = ("fct_payments", "payments_quarantine")

# A day as a reader sees it: (rows, sum of amount), or None when the day has no rows.
DayView = tuple[int, Decimal] | None


@dataclass(frozen=True)
class Violation:
    invariant: str
    detail: str


@dataclass(frozen=True)
class LedgerEntry:
    model_name: str
    partition_date: date
    status: str
    run_id: str
    source_fingerprint: str | None
    rows_written: int
    source_records: int | None


@dataclass
class WarehouseState:
    """What the checker reads from the warehouse after an event (one read-only connection)."""

    facts: dict[date, tuple[int, Decimal]] = field(default_factory=dict)  # day -> rows, amount
    quarantine: dict[date, int] = field(default_factory=dict)
    quarantine_distinct_lines: dict[date, int] = field(default_factory=dict)
    ledger: list[LedgerEntry] = field(default_factory=list)
    duplicated_ids: list[tuple[str, int]] = field(default_factory=list)
    misdated: list[tuple] = field(default_factory=list)  # (table, key, partition day, why)
    outbox_keys: list[str] = field(default_factory=list)
    unsent_keys: set[str] = field(default_factory=set)
    lock_holder: locking.Holder | None = None

    def view(self, day: date) -> DayView:
        return self.facts.get(day)

    def ledger_for(self, model: str) -> dict[date, list[LedgerEntry]]:
        rows: dict[date, list[LedgerEntry]] = defaultdict(list)
        for entry in self.ledger:
            if entry.model_name == model:
                rows[entry.partition_date].append(entry)
        return rows

    def published(self) -> dict[tuple[str, date], tuple[str, str | None]]:
        """(model, day) -> (run id, fingerprint): what changes when a partition is rewritten."""
        return {
            (e.model_name, e.partition_date): (e.run_id, e.source_fingerprint)
            for e in self.ledger
            if e.model_name in CHECKED_MODELS
        }


def _tables(connection) -> set[str]:
    rows = connection.execute(
        "select table_schema || '.' || table_name from information_schema.tables"
    ).fetchall()
    return {row[0] for row in rows}


def read_state(warehouse: Path) -> WarehouseState:
    """The warehouse as the checker needs it; empty when nothing was written yet."""
    state = WarehouseState(lock_holder=locking.read_holder(warehouse))
    if not warehouse.exists():
        return state
    connection = _connect_read_only(warehouse)
    try:
        tables = _tables(connection)
        if "main.fct_payments" in tables:
            for day, rows, amount in connection.execute(
                "select event_date, count(*), sum(amount) from main.fct_payments group by 1"
            ).fetchall():
                state.facts[day] = (rows, amount)
            state.duplicated_ids = connection.execute(
                "select transaction_id, count(*) from main.fct_payments "
                "group by 1 having count(*) > 1 order by 1 limit 5"
            ).fetchall()
            state.misdated += [
                ("fct_payments", *row)
                for row in connection.execute(
                    "select transaction_id, event_date, 'event_ts ' || event_ts::varchar "
                    "from main.fct_payments "
                    "where event_date is distinct from event_ts::date "
                    "or transaction_id not like 'tx-' || strftime(event_date, '%Y%m%d') || '-%' "
                    "order by 1 limit 5"
                ).fetchall()
            ]
        if "main.payments_quarantine" in tables:
            for day, rows, distinct_lines in connection.execute(
                "select landed_date, count(*), count(distinct (file_name, line_number)) "
                "from main.payments_quarantine group by 1"
            ).fetchall():
                state.quarantine[day] = rows
                state.quarantine_distinct_lines[day] = distinct_lines
            state.misdated += [
                ("payments_quarantine", *row)
                for row in connection.execute(
                    "select file_name || ':' || line_number, landed_date, 'from ' || file_name "
                    "from main.payments_quarantine "
                    f"where file_name not like '{DATASET}/dt=' || landed_date::varchar || '/%' "
                    "order by 1 limit 5"
                ).fetchall()
            ]
        if "ops.partition_ledger" in tables:
            state.ledger = [
                LedgerEntry(*row)
                for row in connection.execute(
                    "select model_name, partition_date, status, run_id, source_fingerprint, "
                    "rows_written, source_records from ops.partition_ledger"
                ).fetchall()
            ]
        if "ops.notification_outbox" in tables:
            for key, sent in connection.execute(
                "select idempotency_key, sent_at is not null from ops.notification_outbox"
            ).fetchall():
                state.outbox_keys.append(key)
                if not sent:
                    state.unsent_keys.add(key)
    finally:
        connection.close()
    return state


def _connect_read_only(warehouse: Path, wait_seconds: float = 30):
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            return duckdb.connect(str(warehouse), read_only=True)
        except duckdb.IOException:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.1)


class Truths:
    """The oracle's truth for every export the harness wrote, by (day, source fingerprint)."""

    def __init__(self, landing: Path):
        self.landing = landing
        self.by_fingerprint: dict[tuple[date, str], DayTruth] = {}

    def record(self, day: date) -> str | None:
        """Call after writing a day: remembers its truth if it is ready; its fingerprint."""
        verdict = readiness.day_readiness(self.landing, DATASET, day)
        if not verdict.is_ready:
            return None
        key = (day, verdict.source_fingerprint)
        if key not in self.by_fingerprint:
            self.by_fingerprint[key] = expected_day(self.landing, day)
        return verdict.source_fingerprint

    def current_fingerprint(self, day: date) -> str | None:
        return readiness.day_readiness(self.landing, DATASET, day).source_fingerprint

    def get(self, day: date, fingerprint: str | None) -> DayTruth | None:
        return self.by_fingerprint.get((day, fingerprint)) if fingerprint else None


@dataclass
class CheckContext:
    """What the checker needs to know about the event that just ran."""

    before: WarehouseState
    observations: dict[date, set] = field(default_factory=dict)  # from the concurrent reader
    unchanged_days: list[date] = field(default_factory=list)  # every attempt failed on these
    converge_days: list[date] = field(default_factory=list)  # a killed command was rerun
    deliveries: dict[str, int] = field(default_factory=dict)  # webhook: key -> times received
    allowed_redeliveries: set[str] = field(default_factory=set)  # sent, then killed unmarked
    killed_pids: set[int] = field(default_factory=set)  # their lock file may stay behind


def check(state: WarehouseState, truths: Truths, context: CheckContext) -> list[Violation]:
    """Every invariant over the warehouse after one event."""
    found: list[Violation] = []

    def violation(invariant: str, detail: str) -> None:
        found.append(Violation(invariant, detail))

    for transaction_id, copies in state.duplicated_ids:
        violation("unique_transaction_id", f"{transaction_id} published {copies} times")

    facts_ledger = state.ledger_for("fct_payments")
    quarantine_ledger = state.ledger_for("payments_quarantine")
    for model, ledger, actual in (
        ("fct_payments", facts_ledger, {d: rows for d, (rows, _) in state.facts.items()}),
        ("payments_quarantine", quarantine_ledger, state.quarantine),
    ):
        for day, entries in sorted(ledger.items()):
            if len(entries) > 1:
                violation("ledger_matches_data", f"{model} {day}: {len(entries)} ledger rows")
            entry = entries[0]
            if entry.status != "published":
                violation("ledger_matches_data", f"{model} {day}: ledger status {entry.status}")
            if entry.rows_written != actual.get(day, 0):
                violation(
                    "ledger_matches_data",
                    f"{model} {day}: ledger says {entry.rows_written} rows, "
                    f"table holds {actual.get(day, 0)}",
                )
        for day in sorted(set(actual) - set(ledger)):
            violation(
                "ledger_matches_data",
                f"{model} {day}: {actual[day]} rows without a published ledger row",
            )

    for day, entries in sorted(facts_ledger.items()):
        entry = entries[0]
        truth = truths.get(day, entry.source_fingerprint)
        if truth is None:
            violation(
                "reconciles_at_fingerprint",
                f"fct_payments {day}: ledger fingerprint {entry.source_fingerprint} "
                "is not an export the harness wrote",
            )
            continue
        rows, amount = state.facts.get(day, (0, Decimal(0)))
        if (rows, amount) != (truth.published, truth.amount):
            violation(
                "reconciles_at_fingerprint",
                f"fct_payments {day} @{entry.source_fingerprint}: {rows} rows {amount} "
                f"vs source {truth.published} rows {truth.amount}",
            )
        if entry.source_records != truth.lines:
            violation(
                "reconciles_at_fingerprint",
                f"fct_payments {day}: ledger source_records {entry.source_records} "
                f"vs {truth.lines} landed lines",
            )
        quarantine_entries = quarantine_ledger.get(day)
        if quarantine_entries and quarantine_entries[0].source_fingerprint == (
            entry.source_fingerprint
        ):
            quarantined = state.quarantine.get(day, 0)
            accounted = rows + truth.duplicates + quarantined
            if accounted != entry.source_records:
                violation(
                    "lines_accounted",
                    f"{day}: {rows} published + {truth.duplicates} duplicate + {quarantined} "
                    f"quarantined = {accounted}, manifest says {entry.source_records}",
                )
    for day, entries in sorted(quarantine_ledger.items()):
        entry = entries[0]
        truth = truths.get(day, entry.source_fingerprint)
        quarantined = state.quarantine.get(day, 0)
        if truth is None:
            violation(
                "reconciles_at_fingerprint",
                f"payments_quarantine {day}: ledger fingerprint {entry.source_fingerprint} "
                "is not an export the harness wrote",
            )
        elif quarantined != truth.quarantined:
            violation(
                "reconciles_at_fingerprint",
                f"payments_quarantine {day} @{entry.source_fingerprint}: {quarantined} lines "
                f"vs {truth.quarantined} the source quarantines",
            )
        if state.quarantine_distinct_lines.get(day, 0) != quarantined:
            violation("lines_accounted", f"{day}: a quarantined line is recorded twice")

    for table, key, day, why in state.misdated:
        violation("rows_on_logical_date", f"{table} {key} sits on {day} ({why})")

    keys = defaultdict(int)
    for key in state.outbox_keys:
        keys[key] += 1
    for key, copies in sorted(keys.items()):
        if copies > 1:
            violation("one_notification_per_key", f"outbox holds {copies} rows for {key}")
    for key, times in sorted(context.deliveries.items()):
        allowed = 2 if key in context.allowed_redeliveries else 1
        if times > allowed:
            violation("one_notification_per_key", f"webhook received {key} {times} times")

    for day, seen in sorted(context.observations.items()):
        allowed_views = {context.before.view(day), state.view(day)}
        for view in sorted(seen - allowed_views, key=str):
            violation(
                "reader_sees_whole_publishes",
                f"{day}: a reader saw {_describe(view)}; "
                f"before {_describe(context.before.view(day))}, after {_describe(state.view(day))}",
            )

    before_published, after_published = context.before.published(), state.published()
    for day in context.unchanged_days:
        changes = [
            model
            for model in CHECKED_MODELS
            if before_published.get((model, day)) != after_published.get((model, day))
        ]
        if context.before.view(day) != state.view(day):
            changes.append(
                f"rows {_describe(context.before.view(day))} -> {_describe(state.view(day))}"
            )
        if changes:
            violation(
                "failed_run_changes_nothing",
                f"{day}: every attempt failed, yet changed: {', '.join(changes)}",
            )

    # A killed holder's lock file stays until the next run that needs the lock clears it.
    if state.lock_holder is not None and state.lock_holder.pid not in context.killed_pids:
        violation("lock_released", f"the lock is still held by {state.lock_holder.describe()}")

    for day in context.converge_days:
        fingerprint = truths.current_fingerprint(day)
        behind = [
            model
            for model in CHECKED_MODELS
            if (after_published.get((model, day)) or (None, None))[1] != fingerprint
        ]
        if behind:
            violation(
                "killed_run_converges",
                f"{day}: after the killed command ran again, {', '.join(behind)} "
                f"not published at the day's export {fingerprint}",
            )
    return found


def _describe(view: DayView) -> str:
    return "no rows" if view is None else f"{view[0]} rows {view[1]}"


class ConcurrentReader(threading.Thread):
    """Polls each day's (rows, amount) from its own connection while an event runs.

    In-process, a second DuckDB connection to the file must have dbt-duckdb's
    configuration (read-write, default config); a read-only one opened by the flows
    meanwhile would be refused, so the flows' read-only connections pause the reader
    (see `pause_for_read_only`). Each poll is one statement: one snapshot.
    """

    def __init__(self, warehouse: Path, known_days: set[date], interval: float = 0.005):
        super().__init__(name="harness-reader", daemon=True)
        self.warehouse = warehouse
        self.interval = interval
        self.observations: dict[date, set] = defaultdict(set)
        self.polls = 0
        self._stopping = threading.Event()
        self._pause_requests = 0
        self._paused = threading.Event()
        self._lock = threading.Lock()
        self._connection = None
        self._known_days = set(known_days)  # days with rows before the event

    def run(self) -> None:
        try:
            while not self._stopping.is_set():
                with self._lock:
                    pausing = self._pause_requests > 0
                if pausing:
                    self._close()
                    self._paused.set()
                    time.sleep(self.interval)
                    continue
                self._paused.clear()
                self._poll()
                time.sleep(self.interval)
        finally:
            self._close()
            self._paused.set()

    def _poll(self) -> None:
        if self._connection is None:
            if not self.warehouse.exists():
                return
            try:
                self._connection = duckdb.connect(str(self.warehouse))
            except duckdb.Error:
                return
        try:
            rows = self._connection.execute(
                "select event_date, count(*), sum(amount) from main.fct_payments group by 1"
            ).fetchall()
        except duckdb.CatalogException:
            return
        except duckdb.Error:
            self._close()
            return
        self.polls += 1
        present = {day for day, _, _ in rows}
        for day, count, amount in rows:
            self.observations[day].add((count, amount))
        for day in self._known_days - present:
            self.observations[day].add(None)
        self._known_days |= present

    def _close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(duckdb.Error):
                self._connection.close()
            self._connection = None

    @contextlib.contextmanager
    def paused(self):
        with self._lock:
            self._pause_requests += 1
            self._paused.clear()
        try:
            if self.is_alive():
                self._paused.wait(timeout=10)
            yield
        finally:
            with self._lock:
                self._pause_requests -= 1

    def stop(self) -> dict[date, set]:
        self._stopping.set()
        if self.is_alive():
            self.join(timeout=30)
        return dict(self.observations)
