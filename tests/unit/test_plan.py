"""The plan of a backfill, from day states and landed lines alone (refill/rules/plan.py)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from refill import settings
from refill.rules import planning
from refill.rules.catalog import Dataset, DayTotals
from refill.rules.plan import PlanOptions, late_chunks, make_plan
from refill.rules.planning import Chunk, DayState

D = date(2026, 3, 1)
WINDOW = planning.DateRange(D, D + timedelta(days=5))
MODELS = ["fct_payments"]
# A dataset as the project declares one: the plan speaks of its facts in its words.
FACTS = Dataset("payments", "fct_payments", "event_date", totals_column="amount_usd")
ROWS_ONLY = Dataset("events", "fct_events", "event_day")  # declares no totals


def day(n: int) -> date:
    return D + timedelta(days=n)


def states(*of: DayState) -> dict[date, DayState]:
    return {day(n): state for n, state in enumerate(of)}


def plan_of(day_states, lines=None, totals=None, **options):
    return make_plan(
        WINDOW, MODELS, day_states, lines or {}, PlanOptions(**options), published_totals=totals
    )


P, M, F, S, N = (
    DayState.PUBLISHED,
    DayState.MISSING,
    DayState.FAILED,
    DayState.STALE,
    DayState.NOT_READY,
)


def test_the_default_options_are_the_settings():
    options = PlanOptions()
    assert (options.chunk_days, options.chunk_lines) == (settings.CHUNK_DAYS, settings.CHUNK_LINES)
    assert (options.order, options.on_missing) == (settings.BACKFILL_ORDER, settings.ON_MISSING)
    assert (options.restate, options.only_days) == (False, None)


def test_missing_failed_and_stale_days_are_built_and_published_ones_skipped():
    # GIVEN a published day between days that need work
    plan = plan_of(states(M, F, P, S), chunk_days=7, order="oldest-first")

    # THEN the published day is skipped and splits the chunks (a window is a range)
    assert plan.chunks == [Chunk(day(0), day(1)), Chunk(day(3), day(3))]
    assert plan.skipped == [day(2)]
    assert plan.not_ready == [] and plan.deferred == []


def test_a_stale_day_is_a_restatement_with_the_totals_readers_see_now():
    # GIVEN a missing day and a stale one, both with published facts
    totals = {FACTS: {day(1): (40, 1234.5), day(0): (9, 9.0)}}

    # WHEN the plan is made
    plan = plan_of(states(M, S), totals=totals, chunk_days=7)

    # THEN only the stale day is a restatement (a missing day rebuilds to what is
    # published, if anything), said in the declaration's words: rows and the totals column
    assert plan.restated == {day(1): (DayTotals(FACTS, 40, 1234.5),)}
    said = f"    {day(1)}  40 rows, {FACTS.totals_column} 1,234.50 now published"
    assert said in plan.describe()


def test_a_dataset_without_totals_restates_rows_only_and_several_are_named():
    # GIVEN a stale day of two datasets, one declaring no totals
    totals = {FACTS: {day(0): (3, 7.0)}, ROWS_ONLY: {day(0): (5, 0.0)}}

    # WHEN the plan is made over both, and over the one without totals alone
    both = plan_of(states(S), totals=totals, chunk_days=7)
    alone = plan_of(states(S), totals={ROWS_ONLY: totals[ROWS_ONLY]}, chunk_days=7)

    # THEN each dataset is said in its own words, named when there are several
    assert (
        f"    {day(0)}  {FACTS.name}: 3 rows, {FACTS.totals_column} 7.00; "
        f"{ROWS_ONLY.name}: 5 rows now published"
    ) in both.describe()
    assert f"    {day(0)}  5 rows now published" in alone.describe()


def test_restate_rebuilds_published_days_and_lists_them_as_restated():
    # GIVEN published days of a dataset none of whose facts are published in the window
    plan = plan_of(states(P, P), totals={FACTS: {}}, restate=True, chunk_days=7)

    assert plan.chunks == [Chunk(day(0), day(1))]
    assert plan.skipped == []
    assert plan.restated == {day(0): (DayTotals(FACTS),), day(1): (DayTotals(FACTS),)}
    assert f"    {day(0)}  0 rows, {FACTS.totals_column} 0.00 now published" in plan.describe()


def test_a_restated_day_of_no_dataset_the_plan_builds_is_listed_by_its_day_alone():
    # GIVEN a plan over models built from no dataset's facts (a versioned mart alone)
    plan = plan_of(states(S), chunk_days=7)

    # THEN its restated day is listed, with no dataset's totals
    assert plan.restated == {day(0): ()}
    assert f"    {day(0)}" in plan.describe()


@pytest.mark.parametrize(
    "on_missing, chunked, deferred",
    [
        ("fail", [day(0), day(1), day(2)], []),  # kept: the run stops before its chunk
        ("skip", [day(0), day(2)], []),
        ("wait", [day(0), day(2)], [day(1)]),  # built after the ready chunks, if it lands
    ],
)
def test_a_day_not_ready_is_kept_skipped_or_deferred(on_missing, chunked, deferred):
    plan = plan_of(states(M, N, M), on_missing=on_missing, chunk_days=7)

    assert sorted(d for chunk in plan.chunks for d in chunk.days) == chunked
    assert plan.not_ready == [day(1)]
    assert plan.deferred == deferred
    # only a day planned into a chunk is checked again before it
    assert plan.unready_in_chunks == ({day(1)} if on_missing == "fail" else set())


def test_only_days_rebuilds_exactly_those_days_even_when_published():
    plan = plan_of(states(M, P, M, P), only_days=(day(1), day(2), day(9)), chunk_days=7)

    assert [d for chunk in plan.chunks for d in chunk.days] == [day(1), day(2)]
    assert set(plan.states) == {day(1), day(2)}
    assert set(plan.restated) == {day(1)}
    assert plan.skipped == []


def test_chunks_close_at_the_landed_lines_and_follow_the_order():
    lines = {day(0): 600, day(1): 600, day(2): 100}

    newest = plan_of(states(M, M, M), lines, chunk_days=7, chunk_lines=1000)
    oldest = plan_of(states(M, M, M), lines, chunk_days=7, chunk_lines=1000, order="oldest-first")

    assert oldest.chunks == [Chunk(day(0), day(0)), Chunk(day(1), day(2))]
    assert newest.chunks == list(reversed(oldest.chunks))


def test_the_plan_describes_itself_in_one_line_per_chunk():
    plan = plan_of(states(M, M, P, N), chunk_days=1, order="oldest-first", on_missing="skip")

    assert plan.describe() == [
        "backfill 2026-03-01..2026-03-06 over fct_payments: 2 day(s) to build in 2 chunk(s), "
        "1 already published, 1 not ready",
        "  chunk 1: 2026-03-01",
        "  chunk 2: 2026-03-02",
        "  not ready: 2026-03-04",
    ]


def test_the_plan_leaves_its_inputs_as_they_were():
    given = states(M, P)
    plan_of(given, only_days=(day(0),))
    assert given == states(M, P)


def test_late_days_are_chunked_newest_first_within_the_plans_limits():
    options = PlanOptions(chunk_days=2, chunk_lines=0, order="oldest-first")

    chunks = late_chunks([day(0), day(1), day(2)], {}, options)

    assert chunks == [Chunk(day(2), day(2)), Chunk(day(0), day(1))]
