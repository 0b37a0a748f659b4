"""The board from what was read: a row per day with its lamps, counts and flags, the runs
going on now, and what readers see. Pure: `now` and the retry delays come in, nothing is
read here."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from refill import settings
from refill.rules import planning
from refill.rules.planning import DayState
from refill.views import status
from refill.views.board import lamps as day_lamps
from refill.views.board.model import (
    ACTIVE,
    FAILED,
    RECENT_NOTICES,
    RECENT_RUNS,
    WAITING,
    Board,
    BoardRow,
    Extras,
    Flag,
    Lamp,
)
from refill.warehouse import locking, ops
from refill.warehouse.board_reads import RunEntry
from refill.warehouse.partition_status import DayStatus

# A run log row still "running" whose liveness nobody can tell (ops.run_is_alive says None)
# counts as running this long after it started, no longer.
ACTIVE_RUN_LIMIT = timedelta(hours=6)


def assemble(
    statuses: list[DayStatus],
    extras: Extras | None = None,
    *,
    now: datetime,
    window: planning.DateRange | None = None,
    current_code_versions: dict[str, str] | None = None,
    warehouse: str = "",
    retry_delays: list[float] | None = None,
) -> Board:
    """The board of `statuses` and `extras` at `now`: a row per day, lamps, flags, totals.
    A failed day's next retry is estimated from `retry_delays` (the deployments' own by
    default)."""
    extras = extras or Extras()
    if window is None:
        days = [s.day for s in statuses] or [now.date()]
        window = planning.DateRange(min(days), max(days))
    if retry_delays is None:
        retry_delays = list(settings.RETRY_DELAY_SECONDS)
    active = active_runs(extras, now)
    holes = status.find_hour_holes(extras.hourly, settings.MIN_HOLE_HOURS)
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
        data_as_of=data_as_of_lines(extras),
        active_runs=active,
        recent_runs=extras.runs[:RECENT_RUNS],
        run_notices=[n for n in extras.notices if n.logical_date is None][:RECENT_NOTICES],
        marts=extras.marts,
        builders=extras.builders,
        warehouse=warehouse,
        statuses=statuses,
        extras=extras,
        current_code_versions=current_code_versions,
    )


def with_builders(board: Board, builders: list[locking.Holder], now: datetime) -> Board:
    """The same board with other builders: what moves while the warehouse is busy."""
    extras = replace(board.extras, builders=builders)
    return assemble(
        board.statuses,
        extras,
        window=board.window,
        now=now,
        current_code_versions=board.current_code_versions,
        warehouse=board.warehouse,
    )


def active_runs(extras: Extras, now: datetime) -> list[RunEntry]:
    """The runs going on at `now`: a run building now, a run whose process is alive, and a
    run nobody can tell about within ACTIVE_RUN_LIMIT of its start."""
    building = {builder.run_id for builder in extras.builders}
    return [
        run
        for run in extras.runs
        if run.outcome == "running"
        and (
            run.run_id in building
            or run.alive is True
            or (run.alive is None and now - run.started_at <= ACTIVE_RUN_LIMIT)
        )
    ]


def data_as_of_lines(extras: Extras) -> list[str]:
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
    quarantine = day_status.quarantine
    attempts = extras.attempts.get(day, [])
    holder = next((b for b in extras.builders if str(day) in b.partitions), None)
    building_now = holder is not None
    active_ids = {run.run_id for run in active}
    lamps = [
        day_lamps.ready_lamp(day_status, attempts, active),
        *day_lamps.build_lamps(
            day_status,
            attempts,
            building_now,
            holder,
            active_ids,
            retry_delays,
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
        current_code_version=current_code_versions.get(day_status.catalog.primary.facts_model)
        if day_status.catalog
        else None,
        run_id=facts.run_id if facts else None,
        run_label=run_label,
        is_backfill=bool(facts and facts.is_backfill),
        flags=flags(day_status, attempts, lamps, holes, extras),
        hourly=hourly,
        holes=holes,
        revenue=revenue,
        in_active_run=any(day in run.days() for run in active) or building_now,
        facts_model=day_status.catalog.primary.facts_model if day_status.catalog else "",
    )


def flags(
    day_status: DayStatus,
    attempts: list[ops.Attempt],
    lamps: list[Lamp],
    holes: list[status.HourHole],
    extras: Extras,
) -> list[Flag]:
    """The day's flags, each with its reason: building, not ready, stale, late, retrying or
    failed (or retried, when a later attempt published), backfill, holes, notifications."""
    day = day_status.day
    facts = day_status.facts
    states = {lamp.step: lamp for lamp in lamps}
    found = []
    if states["building"].state == ACTIVE:
        found.append(Flag("building", states["building"].note))
    if day_status.state == DayState.NOT_READY:
        found.append(Flag("not ready", day_status.readiness.reason))
    if day_status.is_stale:
        found.append(Flag("stale", day_lamps.stale_reason(day_status)))
    if day_status.was_late:
        refused = [a for a in attempts if a.outcome == "not ready"]
        first = refused[0] if refused else None
        when = f" at {first.ended_at:%Y-%m-%d %H:%M} UTC ({first.message})" if first else ""
        after = f"; published later by run {facts.run_id}" if facts else "; still not published"
        found.append(Flag("late", f"not ready when its run came{when}{after}"))
    waiting = [lamp for lamp in lamps if lamp.step != "ready" and lamp.state == WAITING]
    failed = [
        lamp
        for lamp in lamps
        if lamp.state == FAILED and (lamp.step != "ready" or day_status.readiness.is_ready)
    ]
    if waiting:
        found.append(Flag("retrying", waiting[0].note))
    elif failed:
        found.append(Flag("failed", failed[0].note))
    else:
        built = day_lamps.builds(attempts)
        failures = [
            a
            for i, a in enumerate(built)
            if a.outcome == "failed" and any(b.outcome == "published" for b in built[i + 1 :])
        ]
        if failures:
            described = "; ".join(
                f"attempt {a.attempt} of run {a.run_id} failed at {a.ended_at:%H:%M:%S} UTC: "
                f"{a.message}"
                for a in failures
            )
            found.append(Flag("retried", f"{described}; a later attempt published"))
    if facts and facts.is_backfill:
        found.append(Flag("backfill", f"published by a backfill (run {facts.run_id})"))
    for hole in holes:
        found.append(Flag("hole", f"{hole}: no events (streaming outage?)"))
    for notice in extras.notices:
        if notice.logical_date == day and notice.outcome != "succeeded":
            sent = "sent" if notice.sent_at else "not delivered yet"
            found.append(Flag(f"notified {notice.outcome}", f"{notice.message} ({sent})"))
    return found
