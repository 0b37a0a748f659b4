"""The invariant checker: what must hold after every event, whatever happened.

The truth it checks against is not refill's: every time the harness writes a ready day,
the independent oracle (`tests.helpers.expected_day`, which parses the part files in
Python) records what that export should publish, keyed by the day's source fingerprint.
A ledger row names the fingerprint it was built from, so a partition is checked against
the export it claims, even after the day was re-exported.

Invariants (docs/harness.md says why each one matters):

- unique_transaction_id       no (transaction_id, event_date) twice in fct_payments (its grain)
- reconciles_at_fingerprint   every published partition equals the oracle's truth for the
                              fingerprint its ledger row records (rows, amount, quarantine,
                              source records)
- ledger_matches_data         one published ledger row per model and day; no rows without one
- ledger_never_claims_more    each ledger row's rows_written is what its table holds for the
                              day (fct_payments, payments_quarantine, v1, v2; a dropped table
                              holds nothing); ops.data_as_of is a view of the ledger
- one_chunk_one_commit        in any one snapshot (after an event, or a concurrent reader's
                              poll), a day last written by a refill run (in ops.run_log,
                              not as `dbt ...`) holds that run's rows in all of fct_payments,
                              payments_quarantine, fct_daily_revenue_v1 and _v2
- reader_sees_whole_publishes a concurrent reader saw, per day, only the publish before the
                              event or the one after it (or nothing before a first publish)
- lines_accounted             published + duplicate + quarantined = the manifest's records
- one_notification_per_key    one outbox row per idempotency key, delivered once
- rows_on_logical_date        every row sits on its logical date (its landed day)
- failed_run_changes_nothing  a run whose every attempt failed left the data as it was
- killed_run_converges        a killed command, run again, publishes what it was asked to
- lock_released               after an event, no lock file is left but a killed run's
- warehouse_opens             the warehouse can be read after every event, kills included
- interrupted_run_stops       after SIGINT or SIGTERM a run exits 130 within the grace (0 if
                              it had just finished) and ops.run_log records it 'interrupted'
                              (never 'running')
- history_not_lost            a full refresh after landing retention keeps (or refuses to
                              drop) every published day whose files are gone
- chunking_invariance         at a scenario's end, the same landing built in a fresh
                              warehouse under another chunking and order gives the same
                              consumer relations and ledger data, day by day
- nothing_from_outside        no row holds a byte from outside the landing: the line a
                              special part file links to, or the process's environment
- current_at_current_rates    a day refill calls current (its ledger code version and the
                              seed rows it read are the project's now) holds the USD the
                              seed's rates give now
- preview_published_as_previewed  a publish from a preview that succeeded published, for
                              each of its days, the rows the preview kept, at the day's
                              export as it is now (none re-exported meanwhile), and
                              dropped the preview; one that failed changed no day
- abandoned_preview_dropped   after a run that finished, schema `preview` holds only the
                              tables of recorded previews: what a killed preview kept is
                              dropped by the next run
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb

from harness.hostile import OUTSIDE_ID
from refill.rules import readiness
from refill.sample_data import DATASET
from refill.warehouse import locking
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
    "ledger_never_claims_more",
    "one_chunk_one_commit",
    "interrupted_run_stops",
    "history_not_lost",
    "chunking_invariance",
    "nothing_from_outside",
    "current_at_current_rates",
    "preview_published_as_previewed",
    "abandoned_preview_dropped",
)
CHECKED_MODELS = ("fct_payments", "payments_quarantine")
INTERRUPT_GRACE_SECONDS = 90.0  # the driver's wait after SIGINT or SIGTERM
INTERRUPTED_EXIT = 130
# The models one chunk publishes together ("one chunk, one commit").
CHUNK_MODELS = (
    "fct_payments",
    "payments_quarantine",
    "fct_daily_revenue_v1",
    "fct_daily_revenue_v2",
)
# Each consumer relation and its partition column, compared across builds.
CONSUMER_RELATIONS = {
    "main.fct_payments": "event_date",
    "main.payments_quarantine": "landed_date",
    "main.fct_daily_revenue_v1": "event_date",
    "main.fct_daily_revenue_v2": "event_date",
}
LEDGER_DATA_COLUMNS = (
    "model_name, partition_date, status, code_version, source_fingerprint, rows_written, "
    "source_records"
)
# One snapshot of who last wrote each model's day, and which runs are refill's.
LEDGER_RUNS_SQL = (
    "select partition_date, model_name, run_id, published_at, "
    "run_id in (select run_id from ops.run_log where command not like 'dbt %') as refill_run "
    "from ops.partition_ledger where model_name in ("
    + ", ".join(f"'{model}'" for model in CHUNK_MODELS)
    + ")"
)

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
    published_at: object = None
    refill_run: bool = False
    code_version: str | None = None
    reference_fingerprint: str | None = None


@dataclass
class WarehouseState:
    """What the checker reads from the warehouse after an event (one read-only connection)."""

    facts: dict[date, tuple[int, Decimal]] = field(default_factory=dict)  # day -> rows, amount
    usd: dict[date, Decimal] = field(default_factory=dict)  # day -> sum of amount_usd
    outside_rows: list[str] = field(default_factory=list)  # rows holding bytes from outside
    table_rows: dict[str, dict[date, int]] = field(default_factory=dict)  # model -> day -> rows
    run_outcomes: dict[str, str] = field(default_factory=dict)  # ops.run_log: run id -> outcome
    quarantine: dict[date, int] = field(default_factory=dict)
    quarantine_distinct_lines: dict[date, int] = field(default_factory=dict)
    ledger: list[LedgerEntry] = field(default_factory=list)
    duplicated_ids: list[tuple[str, int]] = field(default_factory=list)
    misdated: list[tuple] = field(default_factory=list)  # (table, key, partition day, why)
    outbox_keys: list[str] = field(default_factory=list)
    unsent_keys: set[str] = field(default_factory=set)
    lock_holder: locking.Holder | None = None
    preview_tables: set[str] = field(default_factory=set)  # preview ids with tables kept
    recorded_previews: set[str] = field(default_factory=set)  # ops.refill_previews
    newest_preview: str | None = None

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
        _pin_utc(connection)
        connection.execute("begin transaction")  # one snapshot for every read below
        tables = _tables(connection)
        for relation, partition_column in CONSUMER_RELATIONS.items():
            if relation in tables:
                state.table_rows[relation.split(".")[1]] = dict(
                    connection.execute(
                        f"select {partition_column}, count(*) from {relation} group by 1"
                    ).fetchall()
                )
        if "main.fct_payments" in tables:
            for day, rows, amount, usd in connection.execute(
                "select event_date, count(*), sum(amount), sum(amount_usd) "
                "from main.fct_payments group by 1"
            ).fetchall():
                state.facts[day] = (rows, amount)
                state.usd[day] = usd
            state.outside_rows += [
                f"fct_payments {tx} on {day}"
                for tx, day in connection.execute(
                    "select transaction_id, event_date from main.fct_payments "
                    "where transaction_id = ? limit 5",
                    [OUTSIDE_ID],
                ).fetchall()
            ]
            state.duplicated_ids = connection.execute(
                "select transaction_id || ' on ' || event_date::varchar, count(*) "
                "from main.fct_payments group by transaction_id, event_date "
                "having count(*) > 1 order by 1 limit 5"
            ).fetchall()
            state.misdated += [
                ("fct_payments", *row)
                for row in connection.execute(
                    "select transaction_id, event_date, 'event_ts ' || event_ts::varchar "
                    "from main.fct_payments "
                    "where event_date is distinct from cast(event_ts as date) "
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
            state.outside_rows += [
                f"payments_quarantine {name}:{number} ({reason})"
                for name, number, reason in connection.execute(
                    "select file_name, line_number, quarantine_reason "
                    "from main.payments_quarantine "
                    "where contains(line_text, ?) or contains(line_text, 'PATH=') limit 5",
                    [OUTSIDE_ID],
                ).fetchall()
            ]
            state.misdated += [
                ("payments_quarantine", *row)
                for row in connection.execute(
                    "select file_name || ':' || line_number, landed_date, 'from ' || file_name "
                    "from main.payments_quarantine "
                    "where not starts_with(file_name, ? || '/dt=' || landed_date::varchar || '/') "
                    "order by 1 limit 5",
                    [DATASET],
                ).fetchall()
            ]
        if "ops.partition_ledger" in tables:
            has_run_log = "ops.run_log" in tables
            state.ledger = [
                LedgerEntry(*row)
                for row in connection.execute(
                    "select model_name, partition_date, status, run_id, source_fingerprint, "
                    "rows_written, source_records, published_at, "
                    + (
                        "run_id in (select run_id from ops.run_log where command not like 'dbt %')"
                        if has_run_log
                        else "false"
                    )
                    + ", code_version, reference_fingerprint from ops.partition_ledger"
                ).fetchall()
            ]
        if "ops.run_log" in tables:
            # refill's runs: a plain dbt invocation's row (`dbt build`) is no flow run
            state.run_outcomes = dict(
                connection.execute(
                    "select run_id, outcome from ops.run_log where command not like 'dbt %'"
                ).fetchall()
            )
        state.preview_tables = {
            table.split(".")[1].split("__")[0] for table in tables if table.startswith("preview.")
        }
        if "ops.refill_previews" in tables:
            rows = connection.execute(
                "select preview_id from ops.refill_previews order by created_at"
            ).fetchall()
            state.recorded_previews = {preview_id for (preview_id,) in rows}
            state.newest_preview = rows[-1][0] if rows else None
        if "ops.notification_outbox" in tables:
            for key, sent in connection.execute(
                "select idempotency_key, sent_at is not null from ops.notification_outbox"
            ).fetchall():
                state.outbox_keys.append(key)
                if not sent:
                    state.unsent_keys.add(key)
        connection.execute("commit")
    finally:
        connection.close()
    return state


def _pin_utc(connection) -> None:
    """The checker's dates are UTC days, whatever this host's zone (as refill's must be)."""
    with contextlib.suppress(duckdb.Error):
        connection.execute("set TimeZone = 'UTC'")


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
class PublishingPreview:
    """A preview as a publish of it starts: its days and the facts it kept per day."""

    preview_id: str
    days: list[date]
    kept: dict[date, tuple[int, Decimal]]
    code: int | None = None  # the publish's exit status, once it ran


def read_kept_preview(warehouse: Path, preview_id: str) -> PublishingPreview:
    """What preview `preview_id` kept (nothing, when it has no tables: a publish of it must
    then be refused)."""
    kept = PublishingPreview(preview_id, [], {})
    if not warehouse.exists():
        return kept
    facts = f'preview."{preview_id}__main__fct_payments"'
    connection = _connect_read_only(warehouse)
    try:
        if f"preview.{preview_id}__main__fct_payments" in _tables(connection):
            kept.days = [
                day
                for (day,) in connection.execute(
                    f'select distinct partition_date from preview."{preview_id}__main__'
                    'fct_payments__ledger" order by 1'
                ).fetchall()
            ]
            for day, rows, amount in connection.execute(
                f"select event_date, count(*), sum(amount) from {facts} group by 1"
            ).fetchall():
                kept.kept[day] = (rows, amount)
    finally:
        connection.close()
    return kept


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
    torn_reads: list[str] = field(default_factory=list)  # the reader's one_chunk_one_commit
    interrupt: tuple[str, float | None, int | None] | None = None  # signal, seconds, exit
    retained_days: list[date] = field(default_factory=list)  # published, files now gone
    plain_dbt_message: str = ""
    # refill's current code version per model, its reference fingerprint of a day now, and
    # the seed's rates now (the project copy's file, read by the harness):
    # current_at_current_rates; None skips it
    current_versions: dict[str, str] | None = None
    reference_now: Callable[[date], str] | None = None
    rates: dict[tuple[date, str], Decimal] | None = None
    publishing_preview: PublishingPreview | None = None  # the event publishes a preview
    stopped_in_chunk: str | None = None  # signalled in this chunk, not the run's last
    runs_finished: bool = True  # no run of the event was killed (SIGKILL) mid-way


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
        for day in sorted(set(actual) - set(ledger)):
            violation(
                "ledger_matches_data",
                f"{model} {day}: {actual[day]} rows without a published ledger row",
            )

    for model in CHUNK_MODELS:
        held = state.table_rows.get(model, {})
        for day, entries in sorted(state.ledger_for(model).items()):
            claimed = entries[0].rows_written
            if claimed != held.get(day, 0):
                where = "table holds" if model in state.table_rows else "no table, so"
                violation(
                    "ledger_never_claims_more",
                    f"{model} {day}: ledger says {claimed} rows, {where} {held.get(day, 0)}",
                )

    for detail in sorted(set(context.torn_reads) | set(torn_chunks(state.ledger))):
        violation("one_chunk_one_commit", detail)

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

    if context.interrupt is not None:
        signal_name, seconds, code = context.interrupt
        if seconds is None:
            violation(
                "interrupted_run_stops",
                f"the run did not stop within {INTERRUPT_GRACE_SECONDS:.0f}s of {signal_name}",
            )
        elif code not in (INTERRUPTED_EXIT, 0):  # 0: it had just finished
            violation(
                "interrupted_run_stops",
                f"exit status {code} after {signal_name} ({seconds:.1f}s), not "
                f"{INTERRUPTED_EXIT} (interrupted)",
            )
        if context.stopped_in_chunk and code == 0:
            violation(
                "interrupted_run_stops",
                f"exit 0 after {signal_name} during chunk {context.stopped_in_chunk}, not its "
                "last: it went on to the chunks after it",
            )
        for run_id, outcome in sorted(state.run_outcomes.items()):
            if run_id in context.before.run_outcomes:
                continue
            if outcome == "running" or (code == INTERRUPTED_EXIT and outcome != "interrupted"):
                violation(
                    "interrupted_run_stops",
                    f"ops.run_log records run {run_id} as {outcome!r} after {signal_name}, "
                    "not 'interrupted'",
                )

    said = context.plain_dbt_message[:200]
    said = "it succeeded" if said in ("", "ok") else said
    for day in context.retained_days:
        kept = context.before.view(day) == state.view(day) and all(
            before_published.get((model, day)) == after_published.get((model, day))
            for model in CHECKED_MODELS
        )
        if not kept:
            violation(
                "history_not_lost",
                f"{day} (landing gone): {_describe(context.before.view(day))} "
                f"-> {_describe(state.view(day))} after a full refresh "
                f"({said})",
            )

    for where in state.outside_rows:
        violation("nothing_from_outside", f"{where} holds bytes from outside the landing")

    current = (context.current_versions or {}).get("fct_payments")
    for day, entries in sorted(facts_ledger.items()):
        truth = truths.get(day, entries[0].source_fingerprint)
        if current is None or context.rates is None or truth is None:
            continue
        if entries[0].code_version != current or context.reference_now is None:
            continue  # stale: refill says so, and a rebuild will take the rates of now
        if entries[0].reference_fingerprint != context.reference_now(day):
            continue  # the day's rates changed since: stale, as refill says
        try:
            expected = truth.amount_usd(day, context.rates)
        except KeyError:  # no rate for the day: the build's audit refuses it
            continue
        usd = state.usd.get(day) or Decimal(0)
        if usd != expected:
            violation(
                "current_at_current_rates",
                f"fct_payments {day}: refill calls it current (code {current}) and it holds "
                f"{usd} USD; the seed's rates now give {expected}",
            )
    found += _preview_violations(state, truths, context)

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


def _preview_violations(state: WarehouseState, truths, context: CheckContext) -> list[Violation]:
    """preview_published_as_previewed and abandoned_preview_dropped."""
    found = []
    publishing = context.publishing_preview
    facts_ledger = state.ledger_for("fct_payments")
    if publishing is not None and publishing.code == 0:
        for day in publishing.days:
            published, kept = state.facts.get(day), publishing.kept.get(day)
            if published != kept:
                found.append(
                    Violation(
                        "preview_published_as_previewed",
                        f"{day}: published {_describe(published)}, preview "
                        f"{publishing.preview_id} kept {_describe(kept)}",
                    )
                )
            entries = facts_ledger.get(day)
            now = truths.current_fingerprint(day)
            if entries and entries[0].source_fingerprint != now:
                found.append(
                    Violation(
                        "preview_published_as_previewed",
                        f"{day}: published from preview {publishing.preview_id} at export "
                        f"{entries[0].source_fingerprint}, but the day's export is {now} (it "
                        "was re-exported before the publish wrote it)",
                    )
                )
        if publishing.preview_id in state.preview_tables | state.recorded_previews:
            found.append(
                Violation(
                    "preview_published_as_previewed",
                    f"preview {publishing.preview_id} is published but not dropped",
                )
            )
    elif publishing is not None and publishing.code not in (None, 0, INTERRUPTED_EXIT):
        before, after = context.before.published(), state.published()
        for day in publishing.days:
            if before.get(("fct_payments", day)) != after.get(("fct_payments", day)) or (
                context.before.view(day) != state.view(day)
            ):
                found.append(
                    Violation(
                        "preview_published_as_previewed",
                        f"{day}: the publish of preview {publishing.preview_id} failed "
                        f"(exit {publishing.code}), yet the day changed",
                    )
                )
    started = set(state.run_outcomes) - set(context.before.run_outcomes)
    abandoned = state.preview_tables - state.recorded_previews
    if started and context.runs_finished and abandoned:
        found.append(
            Violation(
                "abandoned_preview_dropped",
                f"after a run, schema preview still holds tables of preview(s) "
                f"{', '.join(sorted(abandoned))}, recorded by no run",
            )
        )
    return found


def torn_chunks(ledger) -> list[str]:
    """one_chunk_one_commit over one snapshot of the ledger.

    For each day, the newest ledger row among the chunk's models (by published_at: a
    chunk's models share dbt's run start) names the run that wrote the day last. If that
    is a refill run (in ops.run_log, not as `dbt ...`), every chunk model must hold that
    run's row for the day: otherwise the run published the day in some models and left
    others on an older run (or none). A plain dbt build (ops.run_log's `dbt build` rows)
    may select fewer models.
    Rows are LedgerEntry or (partition_date, model_name, run_id, published_at, refill_run).
    """
    by_day: dict[date, dict[str, tuple]] = defaultdict(dict)
    for row in ledger:
        if isinstance(row, LedgerEntry):
            row = (row.partition_date, row.model_name, row.run_id, row.published_at, row.refill_run)
        if row[1] in CHUNK_MODELS:
            by_day[row[0]][row[1]] = row
    found = []
    for day, rows in sorted(by_day.items()):
        newest = max(rows.values(), key=lambda row: (row[3] is not None, row[3] or 0))
        if not newest[4]:
            continue
        behind = [model for model in CHUNK_MODELS if rows.get(model, (0, 0, None))[2] != newest[2]]
        if behind:
            found.append(
                f"{day}: run {newest[2]} published "
                f"{', '.join(m for m in CHUNK_MODELS if m not in behind)} but not "
                + ", ".join(
                    f"{m} ({'run ' + rows[m][2] if m in rows else 'no row'})" for m in behind
                )
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
        self.torn: list[str] = []  # one_chunk_one_commit, as this reader saw the ledger
        self._torn_seen: set[str] = set()
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
        ledger = []
        try:
            # One transaction: the facts and the ledger of one snapshot.
            self._connection.execute("begin transaction")
            try:
                rows = self._connection.execute(
                    "select event_date, count(*), sum(amount) from main.fct_payments group by 1"
                ).fetchall()
                with contextlib.suppress(duckdb.CatalogException):
                    ledger = self._connection.execute(LEDGER_RUNS_SQL).fetchall()
            finally:
                with contextlib.suppress(duckdb.Error):
                    self._connection.execute("rollback")
        except duckdb.CatalogException:
            return
        except duckdb.Error:
            self._close()
            return
        self.polls += 1
        for detail in torn_chunks(ledger):
            day_and_run = detail.split(" published ")[0]
            if day_and_run not in self._torn_seen:  # the first torn view of a day's run
                self._torn_seen.add(day_and_run)
                self.torn.append(f"a reader saw {detail}")
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


def consumer_rows(warehouse: Path, days: list[date]) -> dict[str, list[tuple] | None]:
    """What a consumer reads of each relation for `days`, and the ledger's data columns:
    lineage columns (named `_...`: who wrote it, not what) and run ids left out."""
    result: dict[str, list[tuple] | None] = {}
    connection = _connect_read_only(warehouse)
    try:
        _pin_utc(connection)
        tables = _tables(connection)
        relations = {**CONSUMER_RELATIONS, "ops.partition_ledger": "partition_date"}
        for relation, partition_column in relations.items():
            if relation not in tables:
                result[relation] = None
                continue
            schema, name = relation.split(".")
            if relation == "ops.partition_ledger":
                columns = LEDGER_DATA_COLUMNS
            else:
                names = connection.execute(
                    "select column_name from information_schema.columns "
                    "where table_schema = ? and table_name = ? and column_name not like '\\_%' "
                    "escape '\\' order by ordinal_position",
                    [schema, name],
                ).fetchall()
                columns = ", ".join(f'"{column}"' for (column,) in names)
            result[relation] = connection.execute(
                f"select {columns} from {relation} "
                f"where {partition_column} in (select unnest(?::date[])) order by all",
                [days],
            ).fetchall()
    finally:
        connection.close()
    return result


def compare_builds(warehouse: Path, fresh: Path, days: list[date]) -> list[Violation]:
    """chunking_invariance: the two warehouses hold the same consumer rows for `days`."""
    if not days:
        return []
    if not fresh.exists():
        return [Violation("chunking_invariance", "the fresh build wrote no warehouse")]
    ours, theirs = consumer_rows(warehouse, days), consumer_rows(fresh, days)
    found = []
    for relation in ours:
        if ours[relation] == theirs[relation]:
            continue
        if ours[relation] is None or theirs[relation] is None:
            missing = "the scenario's warehouse" if ours[relation] is None else "the fresh one"
            found.append(Violation("chunking_invariance", f"{relation} missing in {missing}"))
            continue
        only_ours = sorted(set(ours[relation]) - set(theirs[relation]), key=str)
        only_theirs = sorted(set(theirs[relation]) - set(ours[relation]), key=str)
        sample = (only_ours or only_theirs or [None])[0]
        found.append(
            Violation(
                "chunking_invariance",
                f"{relation}: {len(ours[relation])} rows vs {len(theirs[relation])} in a fresh "
                f"build under another chunking; {len(only_ours)} only in the scenario's, "
                f"{len(only_theirs)} only in the fresh one, e.g. {sample}",
            )
        )
    return found
