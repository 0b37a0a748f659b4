"""One query layer for the state of every day: `refill status`, `refill gaps`, the
backfill planner and the board all read partitions through `collect`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from flows import ops, planning, readiness
from flows.readiness import DayReadiness
from flows.sample_data import DATASET

FAILED_OUTCOMES = ("failed", "not ready")


@dataclass
class DayStatus:
    day: date
    readiness: DayReadiness
    state: planning.DayState
    ledger: dict[str, ops.LedgerRow] = field(default_factory=dict)
    last_attempt: ops.Attempt | None = None
    was_late: bool = False

    @property
    def facts(self) -> ops.LedgerRow | None:
        """The fct_payments ledger row: rows published and source records of the day."""
        return self.ledger.get("fct_payments")

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
) -> list[DayStatus]:
    """The state of each day of `window` across `models`, from the ledger, the attempts
    and the landing. A warehouse that does not exist yet has nothing published."""
    ledger: list[ops.LedgerRow] = []
    attempts: dict[date, ops.Attempt] = {}
    late: set[date] = set()
    if warehouse.exists():
        with ops.connect(warehouse, read_only=True) as connection:
            if ops.has_ops(connection):
                ledger = ops.read_ledger(connection, window.start, window.end)
                attempts = ops.read_latest_attempts(connection, window.start, window.end)
                late = ops.read_days_ever_late(connection, window.start, window.end)
    by_day: dict[date, dict[str, ops.LedgerRow]] = {}
    for row in ledger:
        by_day.setdefault(row.partition_date, {})[row.model_name] = row

    statuses = []
    for verdict in readiness.window_readiness(landing_root, DATASET, window.start, window.end):
        rows = by_day.get(verdict.day, {})
        attempt = attempts.get(verdict.day)
        last_publish = max((row.published_at for row in rows.values()), default=None)
        last_attempt_failed = (
            attempt is not None
            and attempt.outcome in FAILED_OUTCOMES
            and (last_publish is None or attempt.ended_at > last_publish)
        )
        state = planning.day_state(
            is_ready=verdict.is_ready,
            published={m: (r.code_version, r.source_fingerprint) for m, r in rows.items()},
            models=models,
            current_code_versions=current_code_versions,
            source_fingerprint=verdict.source_fingerprint,
            last_attempt_failed=last_attempt_failed,
        )
        statuses.append(DayStatus(verdict.day, verdict, state, rows, attempt, verdict.day in late))
    return statuses
