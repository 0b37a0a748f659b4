"""The board's pure decisions on their own: no warehouse, no Prefect, no clock (the time the
board is drawn at is given)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta

import pytest

from refill import settings
from refill.rules import planning
from refill.rules.planning import DayState, DayVerdict
from refill.rules.readiness import DayReadiness
from refill.views.board import lamps, rows
from refill.views.board.model import ACTIVE, OFF, ON, WAITING, Extras, RunEntry, VersionedMart
from refill.warehouse import locking, ops
from refill.warehouse.partition_status import DayStatus
from tests.helpers import PAYMENTS_CATALOG

DAY = date(2026, 3, 2)
NOW = datetime(2026, 3, 2, 12, 0)


def day_status(ready: bool = True, state=DayState.MISSING, ledger=None) -> DayStatus:
    reason = "ready" if ready else "no _SUCCESS manifest"
    verdict = DayReadiness(DAY, ready, reason, [], 1, 10, "2026-03-02T01:00:00", "fp-1")
    return DayStatus(DAY, verdict, state, ledger or {}, catalog=PAYMENTS_CATALOG)


def ledger_row(model: str, code_version: str, fingerprint: str = "fp-1") -> ops.LedgerRow:
    published = datetime(2026, 3, 2, 2, 0)
    return ops.LedgerRow(
        model, DAY, "r0", "abc", code_version, fingerprint, 100, 110, False, published
    )


def failed_attempt(attempt: int, run_id: str = "r1") -> ops.Attempt:
    ended = datetime(2026, 3, 2, 10, 0) + timedelta(minutes=attempt)
    message = "fct_payments: refill audit: loses landed lines"
    return ops.Attempt(run_id, "backfill", DAY, DAY, attempt, "failed", message, ended, ended)


def running(run_id: str, command: str, parameters: dict, started: datetime) -> RunEntry:
    return RunEntry(
        run_id, command, f"refill {command}", parameters, started, None, "running", None
    )


def test_the_board_is_drawn_at_the_time_it_is_given():
    # GIVEN no day at all
    # WHEN the board is assembled at NOW
    board = rows.assemble([], Extras(), now=NOW)

    # THEN it says so, and its window is NOW's day: no clock was read
    assert board.generated_at == NOW
    assert board.window == planning.DateRange(NOW.date(), NOW.date())
    assert board.data_as_of == ["nothing published yet"]


def test_a_retry_is_estimated_from_the_delay_of_its_attempt():
    # GIVEN a day whose second attempt failed in a run still going on
    status = day_status(state=DayState.FAILED)
    attempts = [failed_attempt(1), failed_attempt(2)]
    run = running("r1", "backfill", {"start": str(DAY), "end": str(DAY)}, NOW)
    extras = Extras(attempts={DAY: attempts}, runs=[replace(run, alive=True)])

    # WHEN the board is assembled with the deployments' delays (settings') and with others
    default = rows.assemble([status], extras, now=NOW).rows[0].lamp("audited")
    given = rows.assemble([status], extras, now=NOW, retry_delays=[5]).rows[0].lamp("audited")

    # THEN the audit lamp waits for the second delay after the last failure, or the given one
    ended = attempts[-1].ended_at
    assert default.state == WAITING
    assert default.at == ended + timedelta(seconds=settings.RETRY_DELAY_SECONDS[1])
    assert given.at == ended + timedelta(seconds=5)


def test_a_daily_run_waiting_for_its_file_shows_a_clock_until_its_deadline():
    # GIVEN a day not landed, and a daily run of it waiting up to an hour for the file
    started = datetime(2026, 3, 2, 6, 0)
    run = running(
        "r2", "daily", {"logical_date": str(DAY), "wait_for_ready_seconds": 3600}, started
    )

    # WHEN its ready lamp is decided
    lamp = lamps.ready_lamp(day_status(ready=False, state=DayState.NOT_READY), [], [run])

    # THEN it is a clock that says until when
    assert lamp.state == WAITING and lamp.at == started + timedelta(hours=1)
    assert "until 07:00 UTC at the latest" in lamp.note and "no _SUCCESS manifest" in lamp.note


def test_a_day_being_built_pulses_while_its_published_data_stands():
    # GIVEN a published day, and a run holding the warehouse to rebuild it
    status = day_status(
        state=DayState.PUBLISHED, ledger={"fct_payments": ledger_row("fct_payments", "v1")}
    )
    holder = locking.Holder("r3", "backfill", locking.HISTORY, [str(DAY)])

    # WHEN its lamps are decided
    drawn = lamps.build_lamps(status, [], True, holder, set(), [300])

    # THEN it builds now, the audits wait, and the published data stands meanwhile
    assert [lamp.state for lamp in drawn] == [ACTIVE, OFF, ON]
    assert drawn[2].note.endswith("it stands while it rebuilds")


def test_a_stale_day_says_which_code_changed_and_how_to_rebuild_it():
    # GIVEN a day published by code v1 of fct_payments, whose code is v2 now
    status = day_status(
        state=DayState.STALE, ledger={"fct_payments": ledger_row("fct_payments", "v1")}
    )
    status.why = DayVerdict(DayState.STALE, code_changed=(("fct_payments", "v1", "v2"),))

    # WHEN the reason is given (the one its state was decided with)
    reason = lamps.stale_reason(status)

    # THEN it names the model and both versions, and the command that rebuilds the day
    assert "fct_payments's code changed (v1 -> v2)" in reason
    assert reason.endswith(f"Rebuild: refill backfill --start {DAY} --end {DAY} --yes")
    assert "re-exported" not in reason


@pytest.mark.parametrize("served", [1, 2])
def test_data_as_of_names_only_the_version_readers_get(served):
    # GIVEN a versioned mart with two versions published, readers on `served`
    mart = VersionedMart("fct_daily_revenue", served, None, None, "revenue_usd")
    mart.published_days = {1: 7, 2: 7}
    published = datetime(2026, 3, 2, 2, 0)
    as_of = [(f"fct_daily_revenue_v{v}", DAY, published) for v in (1, 2)]
    as_of.append(("fct_payments", DAY, published))

    # WHEN the data-as-of lines are written
    lines = rows.data_as_of_lines(Extras(data_as_of=as_of, marts=[mart]))

    # THEN the mart appears once, under its readers' name and the version they get
    assert lines == [
        f"fct_daily_revenue (v{served}) complete through {DAY} (published 2026-03-02 02:00 UTC)",
        f"fct_payments complete through {DAY} (published 2026-03-02 02:00 UTC)",
    ]
