"""Flow runs as the tests start them: quick retries, no waiting for a late file."""

from __future__ import annotations

from datetime import date

from flows.backfill import backfill
from flows.daily import daily
from flows.tasks import run_flow


def run_backfill(**parameters):
    settings = {"retries": 1, "retry_delay_seconds": [0], "lock_wait_seconds": 60}
    return run_flow(backfill, **{**settings, **parameters})


def run_daily(day: date, **parameters):
    settings = {"wait_for_ready_seconds": 0, "retries": 1, "retry_delay_seconds": [0]}
    return run_flow(daily, logical_date=day, **{**settings, **parameters})
