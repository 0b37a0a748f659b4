"""One query layer for the state of every day: `refill status`, `refill gaps`, the
backfill planner and the board all read partitions through `collect`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from refill.rules import planning, readiness
from refill.rules.catalog import Catalog
from refill.rules.readiness import DayReadiness
from refill.warehouse import ops
from refill.warehouse.engine import warehouse_at

FAILED_OUTCOMES = ("failed", "not ready")


@dataclass
class DayStatus:
    day: date
    readiness: DayReadiness
    state: planning.DayState
    ledger: dict[str, ops.LedgerRow] = field(default_factory=dict)
    last_attempt: ops.Attempt | None = None
    was_late: bool = False
    catalog: Catalog | None = None  # which models are the facts and the quarantine
    # why the day is in its state (planning.day_verdict: for STALE, what changed); the
    # board says it as it is, without working it out again
    why: planning.DayVerdict | None = None

    @property
    def facts(self) -> ops.LedgerRow | None:
        """The primary dataset's facts ledger row: rows published and source records."""
        return self.facts_of(self.catalog.primary.name) if self.catalog else None

    @property
    def quarantine(self) -> ops.LedgerRow | None:
        """The primary dataset's quarantine ledger row: the lines not published."""
        model = self.catalog.primary.quarantine_model if self.catalog else None
        return self.ledger.get(model) if model else None

    def facts_of(self, dataset: str) -> ops.LedgerRow | None:
        """The ledger row of `dataset`'s facts model on this day."""
        assert self.catalog is not None
        (found,) = [d for d in self.catalog.datasets if d.name == dataset]
        return self.ledger.get(found.facts_model)

    @property
    def code_versions(self) -> list[str]:
        return sorted({row.code_version for row in self.ledger.values()})

    @property
    def is_stale(self) -> bool:
        return self.state == planning.DayState.STALE


def collect(
    warehouse: Path,
    landing_root: Path,
    window: planning.DateRange,
    models: list[str],
    current_code_versions: dict[str, str],
    catalog: Catalog,
    connection=None,
) -> list[DayStatus]:
    """The state of each day of `window` across `models`, from the ledger, the attempts
    and the landing. Reads on `connection` when given (a reading command's, which needs
    the warehouse to exist); else, for the planner, a warehouse that does not exist yet
    has nothing published, and one that does is read through the boundary's read."""
    store = warehouse_at(warehouse)
    if connection is not None:
        ledger, attempts, late = _read(connection, window)
    elif store.exists():
        with store.read(reader="plan") as connection:
            ledger, attempts, late = _read(connection, window)
    else:
        ledger, attempts, late = [], {}, set()
    by_day: dict[date, dict[str, ops.LedgerRow]] = {}
    for row in ledger:
        by_day.setdefault(row.partition_date, {})[row.model_name] = row

    statuses = []
    verdicts = readiness.datasets_window_readiness(
        landing_root, catalog.names, window.start, window.end
    )
    references = catalog.reference_fingerprints(window.start, window.end)
    for verdict, each in verdicts:
        # A model's rows came from one dataset: its fingerprints are current when they are
        # that dataset's current ones (one dataset: the day's, unchanged).
        current = {v.source_fingerprint for v in each if v.source_fingerprint}
        rows = by_day.get(verdict.day, {})
        fingerprints = {
            m: verdict.source_fingerprint
            if r.source_fingerprint in current
            else r.source_fingerprint
            for m, r in rows.items()
        }
        day_references = references[verdict.day]
        read = {
            m: day_references[0]
            if r.reference_fingerprint in day_references
            else r.reference_fingerprint
            for m, r in rows.items()
        }
        attempt = attempts.get(verdict.day)
        last_publish = max((row.published_at for row in rows.values()), default=None)
        last_attempt_failed = (
            attempt is not None
            and attempt.outcome in FAILED_OUTCOMES
            and (last_publish is None or attempt.ended_at > last_publish)
        )
        why = planning.day_verdict(
            is_ready=verdict.is_ready,
            published={m: (r.code_version, fingerprints[m], read[m]) for m, r in rows.items()},
            models=models,
            current_code_versions=current_code_versions,
            source_fingerprint=verdict.source_fingerprint,
            last_attempt_failed=last_attempt_failed,
            reference_fingerprint=day_references[0],
        )
        statuses.append(
            DayStatus(
                verdict.day, verdict, why.state, rows, attempt, verdict.day in late, catalog, why
            )
        )
    return statuses


def _read(
    connection, window: planning.DateRange
) -> tuple[list[ops.LedgerRow], dict[date, ops.Attempt], set[date]]:
    if not ops.has_ops(connection):
        return [], {}, set()
    return (
        ops.read_ledger(connection, window.start, window.end),
        ops.read_latest_attempts(connection, window.start, window.end),
        ops.read_days_ever_late(connection, window.start, window.end),
    )
