"""The plan of a backfill: which days it builds, in which chunks and order, which it skips,
which wait for their export, and which published numbers it restates.

Pure, like the rest of refill.rules: a function of the days' states and landed lines,
no warehouse, no dbt, no Prefect, no clock. The flow gathers those facts
(refill.warehouse.partition_status) and builds what the plan says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from refill import settings
from refill.rules import planning
from refill.rules.catalog import Dataset, DayTotals, describe_day_totals
from refill.rules.planning import Chunk, DayState


@dataclass(frozen=True)
class PlanOptions:
    """How a backfill chooses, cuts and orders its days (the command's plan options).

    only_days: rebuild exactly these days of the window (`refill gaps --fix`), restating
    any that are published; None: every day of the window that needs it.
    """

    chunk_days: int = settings.CHUNK_DAYS
    chunk_lines: int = settings.CHUNK_LINES
    order: str = settings.BACKFILL_ORDER
    restate: bool = False
    on_missing: str = settings.ON_MISSING
    only_days: tuple[date, ...] | None = None


@dataclass(frozen=True)
class BackfillPlan:
    window: planning.DateRange
    models: list[str]
    states: Mapping[date, DayState]
    chunks: list[Chunk]
    not_ready: list[date]
    deferred: list[date]  # not ready now, retried after the ready chunks (--on-missing wait)
    # published days the plan overwrites: what each dataset it builds publishes there now
    restated: dict[date, tuple[DayTotals, ...]]
    skipped: list[date]  # published with the current code and source
    options: PlanOptions = field(default_factory=PlanOptions)

    @property
    def unready_in_chunks(self) -> frozenset[date]:
        """Days in a chunk that were not ready when planned (--on-missing fail): the run
        checks them again before their chunk, and stops there if they still are not."""
        return frozenset(day for chunk in self.chunks for day in chunk.days) & frozenset(
            self.not_ready
        )

    def describe(self) -> list[str]:
        days = sum(len(chunk.days) for chunk in self.chunks)
        lines = [
            f"backfill {self.window} over {', '.join(self.models)}: "
            f"{days} day(s) to build in {len(self.chunks)} chunk(s), "
            f"{len(self.skipped)} already published, {len(self.not_ready)} not ready"
        ]
        lines += [f"  chunk {n}: {chunk}" for n, chunk in enumerate(self.chunks, 1)]
        if self.restated:
            lines.append(f"  restates {len(self.restated)} published day(s):")
            lines += [
                f"    {day}  {describe_day_totals(totals)} now published"
                if totals
                else f"    {day}"
                for day, totals in sorted(self.restated.items())
            ]
        if self.not_ready:
            lines.append("  not ready: " + ", ".join(str(day) for day in self.not_ready))
        return lines


def make_plan(
    window: planning.DateRange,
    models: list[str],
    states: Mapping[date, DayState],
    landed_lines: Mapping[date, int],
    options: PlanOptions,
    published_totals: Mapping[Dataset, Mapping[date, tuple[int, float]]] | None = None,
) -> BackfillPlan:
    """The plan of a backfill of `window` over `models`.

    states: each day's state (planning.day_verdict); landed_lines: the lines its manifest
    lists (chunks close at options.chunk_lines); published_totals: per dataset the plan
    builds, its facts' rows and totals now published per day (a day absent: none), shown
    for the days the plan restates.

    Builds the missing, failed and stale days (published ones too with `restate`, and
    every day of `only_days`). A day not ready is, by `on_missing`: kept in its chunk so
    the run stops before it (fail), left out (skip), or deferred until it lands (wait).
    """
    totals = published_totals or {}
    restate = options.restate
    if options.only_days is not None:
        wanted = set(options.only_days)
        states = {day: state for day, state in states.items() if day in wanted}
        restate = True
    to_build = planning.days_to_build(dict(states), restate)
    not_ready = sorted(day for day, state in states.items() if state == DayState.NOT_READY)
    deferred: list[date] = []
    if options.on_missing == "fail":
        # An unready day stays in the plan: the run stops before its chunk.
        to_build = sorted(set(to_build) | set(not_ready))
    elif options.on_missing == "wait":
        deferred = not_ready
    chunks = planning.plan_chunks(
        to_build,
        options.chunk_days,
        options.order,
        lines=landed_lines,
        chunk_lines=options.chunk_lines,
    )
    # Restating = changing numbers readers have seen: stale days, and current ones rebuilt
    # on purpose. A missing or failed day rebuilds to the numbers already published, if any.
    restated = {
        day: tuple(
            DayTotals(dataset, *by_day.get(day, (0, 0.0))) for dataset, by_day in totals.items()
        )
        for day in to_build
        if states.get(day) in (DayState.STALE, DayState.PUBLISHED)
    }
    skipped = sorted(
        day for day, state in states.items() if state == DayState.PUBLISHED and not restate
    )
    return BackfillPlan(
        window, models, dict(states), chunks, not_ready, deferred, restated, skipped, options
    )


def late_chunks(
    landed: Sequence[date], landed_lines: Mapping[date, int], options: PlanOptions
) -> list[Chunk]:
    """Chunks for deferred days that have landed since (--on-missing wait): newest first,
    whatever the plan's order, cut by the plan's limits."""
    return planning.plan_chunks(
        landed,
        options.chunk_days,
        "newest-first",
        lines=landed_lines,
        chunk_lines=options.chunk_lines,
    )
