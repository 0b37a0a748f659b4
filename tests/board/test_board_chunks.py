"""The board while chunks build at once (Spark, --max-concurrency 2): every chunk building now
is shown, each day with the chunk that builds it. The builders are read from the warehouse's
real locks, held by other processes as a backfill's workers hold them; no Spark is needed to
read locks."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from refill.rules.planning import DayState
from refill.rules.readiness import DayReadiness
from refill.views.board import rows
from refill.views.board.markdown import board_markdown
from refill.views.board.model import ACTIVE, Extras, RunEntry
from refill.views.board.page import render_html
from refill.warehouse.partition_status import DayStatus
from refill.warehouse.spark_engine import SparkWarehouse
from tests.helpers import PAYMENTS_CATALOG, hold_lock_in_another_process

D1 = date(2026, 2, 1)
NOW = datetime(2026, 2, 10, 12, 0)
DAYS = [D1 + timedelta(n) for n in range(4)]


def status(day: date) -> DayStatus:
    verdict = DayReadiness(day, True, "ready", [], 1, 10, "2026-02-02T01:00:00", "fp-1")
    return DayStatus(day, verdict, DayState.MISSING, {}, catalog=PAYMENTS_CATALOG)


def test_two_chunks_building_at_once_are_both_on_the_board(tmp_path):
    # GIVEN a backfill whose two workers each hold a chunk of a Spark warehouse's days
    folder = tmp_path / "spark"
    run = RunEntry("run-b", "backfill", "refill backfill", {}, NOW, None, "running", None)
    first = hold_lock_in_another_process(folder, 120, run_id="run-b", days=DAYS[:2], per_day=True)
    second = hold_lock_in_another_process(folder, 120, run_id="run-b", days=DAYS[2:], per_day=True)
    try:
        # WHEN the board is drawn from the warehouse's builders
        builders = SparkWarehouse(folder).builders()
        board = rows.assemble(
            [status(d) for d in DAYS], Extras(runs=[run], builders=builders), now=NOW
        )

        # THEN both chunks build now, each day with the worker of its own chunk
        assert [b.pid for b in builders] == [first.pid, second.pid]
        for day, worker in zip(DAYS, [first, first, second, second], strict=True):
            building = next(row for row in board.rows if row.day == day).lamp("building")
            assert building.state == ACTIVE, day
            assert f"pid {worker.pid}" in building.note, day
        chunks = "building 2026-02-01..2026-02-02, 2026-02-03..2026-02-04"
        assert chunks in render_html(board)
        assert f"running now: {run.describe()} · {chunks}" in board_markdown(board)

        # WHEN the first chunk's worker ends
        first.kill()
        first.wait()
        board = rows.with_builders(board, SparkWarehouse(folder).builders(), NOW)

        # THEN only the second chunk's days still build
        states = [next(r for r in board.rows if r.day == d).lamp("building").state for d in DAYS]
        assert [state == ACTIVE for state in states] == [False, False, True, True]
    finally:
        for worker in (first, second):
            worker.kill()
            worker.wait()
