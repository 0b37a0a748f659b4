"""Which chunk may start now when chunks run in parallel (refill.rules.schedule): never more
than the limit at once, never two over the same day, a waiting daily run first, the plan's
order otherwise."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from refill.rules.planning import Chunk
from refill.rules.schedule import next_to_start, overlaps, startable

D0 = date(2026, 1, 1)


def chunk(first: int, last: int) -> Chunk:
    return Chunk(D0 + timedelta(first), D0 + timedelta(last))


NEWEST_FIRST = [chunk(9, 11), chunk(6, 8), chunk(3, 5), chunk(0, 2)]


def test_chunks_that_share_a_day_overlap():
    assert overlaps(chunk(0, 2), chunk(2, 4))
    assert overlaps(chunk(0, 5), chunk(2, 3))
    assert not overlaps(chunk(0, 2), chunk(3, 4))


def test_up_to_the_limit_start_in_plan_order():
    assert startable(NEWEST_FIRST, [], 2) == [chunk(9, 11), chunk(6, 8)]
    assert startable(NEWEST_FIRST, [], 1) == [chunk(9, 11)]
    assert startable(NEWEST_FIRST, [], 9) == NEWEST_FIRST


def test_none_starts_while_every_slot_is_taken():
    assert next_to_start(NEWEST_FIRST[2:], NEWEST_FIRST[:2], 2) is None
    assert next_to_start(NEWEST_FIRST[2:], NEWEST_FIRST[:1], 2) == chunk(3, 5)


def test_a_chunk_over_a_running_day_waits_and_the_next_disjoint_one_goes():
    # a chunk rebuilt after a failure can meet a running one: it waits, the plan goes on
    pending = [chunk(4, 6), chunk(0, 2)]
    assert next_to_start(pending, [chunk(6, 8)], 3) == chunk(0, 2)
    assert next_to_start([chunk(4, 6)], [chunk(6, 8)], 3) is None


def test_a_waiting_daily_run_goes_before_the_next_chunk():
    assert next_to_start(NEWEST_FIRST, [], 2, live_waiting=True) is None
    assert startable(NEWEST_FIRST, [chunk(20, 20)], 2, live_waiting=True) == []


def test_a_limit_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        next_to_start(NEWEST_FIRST, [], 0)
