"""The lamps of a day: how far its latest run went (ready, building, audited, published),
and why a lamp is crossed, waiting or stale. Pure: decided from what was read, nothing
is read here."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

from refill.views.board.model import ACTIVE, FAILED, OFF, ON, STALE, WAITING, Lamp
from refill.warehouse import locking, ops
from refill.warehouse.board_reads import RunEntry
from refill.warehouse.partition_status import DayStatus

# The lamp a failed attempt stopped at, from the step the run recorded (ops.partition_attempts
# .failed_step): readiness refused by dbt, the build, the audits, publishing (the ledger);
# an interrupted run, a lock it never got or anything else stops at the build.
STEP_LAMPS = {
    "readiness": "ready",
    "build": "building",
    "audit": "audited",
    "publish": "published",
    "interrupted": "building",
    "lock": "building",
    "other": "building",
}
# An attempt recorded before failed_step existed: its message says when the audits failed
# (macros/audits raise "refill audit: ...").
AUDIT_FAILURE = re.compile(r"refill audit")


def failure_step(attempt: ops.Attempt) -> str:
    """The lamp a failed attempt stopped at: from the step its run recorded, or for an
    attempt recorded before failed_step existed, from its message."""
    if attempt.failed_step is not None:
        return STEP_LAMPS.get(attempt.failed_step, "building")
    return "audited" if AUDIT_FAILURE.search(attempt.message or "") else "building"


def builds(attempts: list[ops.Attempt]) -> list[ops.Attempt]:
    """The attempts that built (published or failed), not those refused as not ready."""
    return [a for a in attempts if a.outcome in ("published", "failed")]


def last_failed_build(day_status: DayStatus, attempts: list[ops.Attempt]) -> ops.Attempt | None:
    """The day's latest build attempt when it failed after the data now published."""
    built = builds(attempts)
    last = built[-1] if built else None
    facts = day_status.facts
    if last is None or last.outcome != "failed":
        return None
    if facts is not None and last.ended_at <= facts.published_at:
        return None
    return last


def ready_lamp(day_status: DayStatus, attempts: list[ops.Attempt], active: list[RunEntry]) -> Lamp:
    verdict = day_status.readiness
    refused = last_failed_build(day_status, attempts)
    if refused is not None and failure_step(refused) == "ready":
        return Lamp(
            "ready",
            FAILED,
            f"attempt {refused.attempt} of {refused.command} run {refused.run_id} refused it "
            f"at readiness at {refused.ended_at:%Y-%m-%d %H:%M:%S} UTC: {refused.message}",
        )
    if verdict.is_ready:
        return Lamp(
            "ready",
            ON,
            f"ready: _SUCCESS lists {verdict.manifest_files} file(s) and "
            f"{verdict.manifest_records} records, exported at {verdict.exported_at}",
        )
    for run in active:
        seconds = run.parameters.get("wait_for_ready_seconds")
        waits = (run.command == "daily" and seconds) or run.parameters.get("on_missing") == "wait"
        if waits and day_status.day in run.days():
            deadline = run.started_at + timedelta(seconds=float(seconds)) if seconds else None
            until = f", until {deadline:%H:%M} UTC at the latest" if deadline else ""
            return Lamp(
                "ready",
                WAITING,
                f"waiting for the file ({verdict.reason}): run {run.run_id} ({run.command}) "
                f"has been checking since {run.started_at:%H:%M} UTC{until}",
                deadline,
            )
    refused = [a for a in attempts if a.outcome == "not ready"]
    if refused:
        last = refused[-1]
        return Lamp(
            "ready",
            FAILED,
            f"not ready ({verdict.reason}): {last.command} run {last.run_id} refused to build it "
            f"at {last.ended_at:%Y-%m-%d %H:%M} UTC; rerun it when the file lands",
        )
    return Lamp("ready", OFF, f"not ready: {verdict.reason}")


def build_lamps(
    day_status: DayStatus,
    attempts: list[ops.Attempt],
    building_now: bool,
    holder: locking.Holder | None,
    active_ids: set[str],
    retry_delays: list[float],
) -> list[Lamp]:
    """building, audited, published: how far the latest build of the day went."""
    facts = day_status.facts
    built = builds(attempts)
    last = built[-1] if built else None
    if facts is None:
        published = Lamp("published", OFF, "nothing published for this day")
    else:
        note = (
            f"published {facts.rows_written} rows by run {facts.run_id} at "
            f"{facts.published_at:%Y-%m-%d %H:%M} UTC"
        )
        if day_status.is_stale:
            reason = stale_reason(day_status)
            published = Lamp("published", STALE, f"{note}; stale: {reason}")
        else:
            published = Lamp("published", ON, note)

    if building_now:
        if facts is not None:
            published = replace(published, note=published.note + "; it stands while it rebuilds")
        return [
            Lamp("building", ACTIVE, f"building now: {holder.describe()}"),
            Lamp("audited", OFF, "the audits run when the build reaches them"),
            published,
        ]

    if last_failed_build(day_status, attempts) is None:
        if last is not None:
            built_by = (
                f"built by {last.command} run {last.run_id}, attempt {last.attempt}, "
                f"{last.started_at:%Y-%m-%d %H:%M:%S}-{last.ended_at:%H:%M:%S} UTC"
            )
        elif facts is not None:
            built_by = f"built by run {facts.run_id} (a dbt build outside the flows)"
        else:
            return [
                Lamp("building", OFF, "not built yet"),
                Lamp("audited", OFF, "not audited yet"),
                published,
            ]
        return [
            Lamp("building", ON, built_by),
            Lamp("audited", ON, "audits passed: keys unique, every line accounted for, reconciled"),
            published,
        ]

    failure = (
        f"attempt {last.attempt} of {last.command} run {last.run_id} failed at "
        f"{last.ended_at:%Y-%m-%d %H:%M:%S} UTC: {last.message}"
    )
    if facts is not None:
        failure += f". The data published by run {facts.run_id} stands"
    state, retry_at = FAILED, None
    if last.run_id in active_ids:
        delay = retry_delays[min(last.attempt - 1, len(retry_delays) - 1)] if retry_delays else 0
        retry_at = last.ended_at + timedelta(seconds=delay)
        state = WAITING
        failure += (
            f". Next retry about {retry_at:%H:%M:%S} UTC (estimated: the last failure plus the "
            f"deployment's retry delay of {delay:g}s; a run started with its own --retry-delay "
            "waits that instead)"
        )
    stopped_at = failure_step(last)
    reached = {"ready": -1, "building": 0, "audited": 1, "published": 2}[stopped_at]
    passed = {
        "building": f"built in attempt {last.attempt} of run {last.run_id}",
        "audited": f"audits passed in attempt {last.attempt} of run {last.run_id}",
    }
    lamps = []
    for index, step in enumerate(("building", "audited", "published")):
        if reached < 0 and step == "published" and facts is not None:
            lamps.append(published)  # readiness refused the rebuild: the data stands
        elif reached < 0:
            lamps.append(Lamp(step, OFF, f"not reached: {failure}"))
        elif index < reached:
            lamps.append(Lamp(step, ON, passed[step]))
        elif index == reached:
            lamps.append(Lamp(step, state, failure, retry_at))
        elif step == "published" and facts is not None:
            lamps.append(published)
        else:
            lamps.append(Lamp(step, OFF, f"not reached: attempt {last.attempt} stopped before"))
    return lamps


def stale_reason(day_status: DayStatus) -> str:
    """Why a published day is stale (the reason its state was decided with, from
    planning.day_verdict), and the command that rebuilds it."""
    why = day_status.why
    reason = (why.reason if why is not None else "") or (
        "published from another source export or other code"
    )
    day = day_status.day
    return f"{reason}. Rebuild: refill backfill --start {day} --end {day} --yes"
