"""The dbt vars of a window build, as refill passes them to dbt. A plain
`dbt build --vars '{start_date: ..., end_date: ...}'` names the same vars; the project's
macros read them (macros/window/refill_window.sql)."""

from __future__ import annotations

from datetime import date


def window_vars(
    start: date,
    end: date,
    run_id: str | None = None,
    is_backfill: bool = False,
    allow_wide_window: bool = False,
) -> dict:
    """The vars of one build of the days `start` to `end`, both included."""
    variables: dict = {"start_date": start.isoformat(), "end_date": end.isoformat()}
    if run_id:
        variables["refill_run_id"] = run_id
    if is_backfill:
        variables["refill_is_backfill"] = True
    if allow_wide_window:
        variables["allow_wide_window"] = True
    return variables
