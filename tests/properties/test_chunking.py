"""Property (chunking and order): any chunking of a range into windows, built in any order,
with any chunk built again afterwards, gives the warehouse one window over the whole range
gives: every consumer relation and the ledger's data (tests.helpers.snapshot: run ids and
publish times left out).

Days are tiny (a handful of lines each, with replays, conflicts, malformed lines and
transaction ids reused across days), and examples few: each builds its chunks with dbt on
a copy of a warehouse whose seeds were loaded once.
"""

from __future__ import annotations

import tempfile
from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from refill.rules.window import window_vars
from refill.sample_data import payment_line, write_landed_day
from tests.helpers import snapshot
from tests.properties.conftest import copy_warehouse

FIRST = date(2025, 6, 9)
DAYS = [FIRST + timedelta(days=n) for n in range(3)]


def land_tiny_days(landing: Path) -> None:
    """Three days: payments, a replay, a conflict, a malformed line, and refunds of the
    previous day's transactions (the same ids on two days: one row on each)."""
    for index, day in enumerate(DAYS):
        lines = [payment_line(day, n, amount=10 + n + index) for n in range(3)]
        lines += [lines[0], payment_line(day, 1, amount=99), "not json"]
        if index:
            previous = DAYS[index - 1]
            refunded = f"tx-{previous:%Y%m%d}-000000"
            lines.append(payment_line(day, 2, transaction_id=refunded, status="refunded"))
        write_landed_day(landing, day, [lines[: 2 + index % 2], lines[2 + index % 2 :]])


@st.composite
def chunkings(draw) -> list[tuple[date, date]]:
    """The range cut into contiguous windows, in any order, then any of them built again."""
    cuts = [draw(st.booleans()) for _ in DAYS[1:]]
    chunks, start = [], DAYS[0]
    for day, cut in zip(DAYS[1:], cuts, strict=True):
        if cut:
            chunks.append((start, day - timedelta(days=1)))
            start = day
    chunks.append((start, DAYS[-1]))
    ordered = draw(st.permutations(chunks))
    return ordered + draw(st.lists(st.sampled_from(chunks), max_size=1))


def build(dbt_project, windows: list[tuple[date, date]]) -> None:
    for start, end in windows:
        outcome = dbt_project.build(window_vars(start, end), include_seeds=False)
        assert outcome.success, f"{start}..{end}: {outcome.message}"
        # a chunk loads no seed: its flow loaded them once, and a chunk that reloaded them
        # would replace a table the other chunks read (on Spark: its files, mid-read)
        assert not [node for node in outcome.statuses if node.startswith("seed.")], outcome.statuses


@pytest.fixture(scope="module")
def whole_range(tmp_path_factory, seeded_warehouse, dbt_project):
    """The landing, and the snapshot of the range built as one window."""
    root = tmp_path_factory.mktemp("chunking")
    landing = root / "landing"
    land_tiny_days(landing)
    warehouse = copy_warehouse(seeded_warehouse, root / "whole" / "refill.duckdb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_LANDING", str(landing))
        patch.setenv("REFILL_WAREHOUSE", str(warehouse))
        build(dbt_project, [(DAYS[0], DAYS[-1])])
    return landing, snapshot(warehouse)


@settings(max_examples=max(settings().max_examples // 5, 3))
@given(windows=chunkings())
def test_any_chunking_and_order_of_a_range_gives_the_same_warehouse(
    whole_range, seeded_warehouse, dbt_project, windows
):
    landing, expected = whole_range
    with tempfile.TemporaryDirectory() as scratch, pytest.MonkeyPatch.context() as patch:
        # GIVEN the range's landing and a fresh warehouse
        warehouse = copy_warehouse(seeded_warehouse, Path(scratch) / "refill.duckdb")
        patch.setenv("REFILL_LANDING", str(landing))
        patch.setenv("REFILL_WAREHOUSE", str(warehouse))

        # WHEN the range is built in these windows, in this order
        build(dbt_project, windows)

        # THEN the warehouse is the one a single window gives
        assert snapshot(warehouse) == expected
