"""Prefect tasks shared by the daily and backfill flows: prepare the warehouse, build a
window under the warehouse lock, notify."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
from dataclasses import dataclass
from datetime import date

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import task_run
from prefect.states import Failed

from flows import interrupts, locking, notify, ops, prefect_server, settings
from flows.dbt_runner import DbtProject, window_vars
from flows.errors import RefillError
from flows.planning import Chunk

# Fault injection for the tests: REFILL_INJECT_FAULT="<point>[@<chunk>][#<attempts>]" makes
# a build fail at a named point of the dbt transaction (after_delete, in_audit,
# before_ledger; see macros/faults/refill_fault_point.sql), only in that chunk and only
# for its first <attempts> attempts when given. Unset in production.
FAULT_ENV = "REFILL_INJECT_FAULT"


class ChunkFailed(RefillError):
    """A window's build failed; the warehouse holds that window's previous state."""


@dataclass(frozen=True)
class RunContext:
    """What every task of one flow run shares."""

    run_id: str
    command: str
    priority: str  # locking.LIVE for daily runs, locking.HISTORY for backfills
    is_backfill: bool
    select: str | None
    lock_wait_seconds: float
    fault: str | None = None
    rows_model: str = "fct_payments"  # whose ledger rows a chunk reports as its rows


@dataclass(frozen=True)
class ChunkResult:
    chunk: Chunk
    rows: int
    seconds: float
    attempt: int


def combined_code_version(versions: dict[str, str]) -> str:
    """One version for a whole run (notification keys): a hash of every model's version."""
    return hashlib.md5(json.dumps(versions, sort_keys=True).encode()).hexdigest()[:12]


def prepare_warehouse(project: DbtProject, context: RunContext) -> None:
    """Load the seeds, and with them create the ops relations (dbt's on-run-start hooks
    run for every invocation): once per flow run, not per chunk, and not at all when the
    warehouse already holds them from seeds and DDL of the same content (ops.seed_loads).
    A fresh warehouse, a changed seed or a changed macro always loads."""
    warehouse = settings.warehouse_path()
    load_key = project.seed_load_key()
    with locking.warehouse_lock(
        warehouse,
        run_id=context.run_id,
        command=context.command,
        priority=context.priority,
        wait_seconds=context.lock_wait_seconds,
    ):
        if warehouse.exists():
            with ops.connect(warehouse) as connection:
                if ops.seeds_are_loaded(connection, project.seeds(), load_key):
                    return
        command = ["seed", "--no-write-json", "--vars", json.dumps({"refill_seed_key": load_key})]
        result = project.invoke(command)
        if not result.success:
            raise RefillError("loading the dbt seeds failed; see logs/dbt.log")


def with_warehouse(context: RunContext, work, partitions: list[date] | None = None):
    """Run `work(connection)` holding the warehouse lock, on a short connection."""
    warehouse = settings.warehouse_path()
    with (
        locking.warehouse_lock(
            warehouse,
            run_id=context.run_id,
            command=context.command,
            priority=context.priority,
            partitions=partitions,
            wait_seconds=context.lock_wait_seconds,
        ),
        ops.connect(warehouse) as connection,
    ):
        return work(connection)


@task(name="build-window", cache_policy=NO_CACHE)
@interrupts.finishes_before_stopping
def build_window(project: DbtProject, context: RunContext, chunk: Chunk) -> ChunkResult:
    """Build one window under the warehouse lock and record the attempt for each of its days.

    Raises ChunkFailed on failure, so Prefect's declared retries apply; the failed
    dbt transaction has already rolled back, so a retry starts from the same state.
    """
    logger = get_run_logger()
    attempt = task_run.run_count or 1
    clock = time.monotonic()
    warehouse = settings.warehouse_path()
    variables = window_vars(chunk.start, chunk.end, context.run_id, context.is_backfill)
    point = fault_point_for(context.fault, chunk, attempt)
    if point:
        variables["refill_inject_fault"] = point

    def on_wait(holder: locking.Holder) -> None:
        logger.info("chunk %s waits for the warehouse, held by %s", chunk, holder.describe())

    with locking.warehouse_lock(
        warehouse,
        run_id=context.run_id,
        command=context.command,
        priority=context.priority,
        partitions=chunk.days,
        wait_seconds=context.lock_wait_seconds,
        on_wait=on_wait,
    ):
        # the last safe point before the build: a stop asked while this chunk waited for the
        # warehouse or between its attempts starts no build
        interrupts.raise_if_requested(f"before chunk {chunk}")
        started = ops.utc_now()  # once the warehouse is ours: the attempt is the build itself
        logger.info("chunk %s: building (attempt %d)", chunk, attempt)
        outcome = project.build(variables, select=context.select, include_seeds=False)
        with ops.connect(warehouse) as connection:
            ops.record_attempt(
                connection,
                chunk.days,
                ops.Attempt(
                    context.run_id,
                    context.command,
                    chunk.start,
                    chunk.end,
                    attempt,
                    "published" if outcome.success else "failed",
                    outcome.message,
                    started,
                    ops.utc_now(),
                ),
            )
            rows = connection.execute(
                "select coalesce(sum(rows_written), 0) from ops.partition_ledger "
                "where model_name = ? and partition_date between ? and ? and run_id = ?",
                [context.rows_model, chunk.start, chunk.end, context.run_id],
            ).fetchone()[0]
    if not outcome.success:
        raise ChunkFailed(f"chunk {chunk} failed (attempt {attempt}): {outcome.message}")
    return ChunkResult(chunk, int(rows), time.monotonic() - clock, attempt)


def record_interrupted_attempt(context: RunContext, chunk: Chunk) -> None:
    """The chunk was stopped before its build started (waiting for the warehouse or
    between attempts): its days' latest attempt says so. Nothing of it was written."""
    now = ops.utc_now()
    attempt = ops.Attempt(
        context.run_id,
        context.command,
        chunk.start,
        chunk.end,
        0,
        "interrupted",
        "stopped before its build started",
        now,
        now,
    )
    with_warehouse(context, lambda c: ops.record_attempt(c, chunk.days, attempt))


def send_notification(context: RunContext, notification: notify.Notification) -> bool:
    """Queue the notification (once per idempotency key) and deliver what is pending."""
    logger = get_run_logger()

    def work(connection) -> bool:
        is_new = notify.enqueue(connection, notification)
        notify.deliver_pending(connection, logger)
        return is_new

    return with_warehouse(context, work)


def refusals_fail_the_run(flow_body):
    """A RefillError ends the flow run Failed with its one-line message, without a traceback:
    a refusal or a loud failure is an outcome the run reports, not a crash of refill."""

    @functools.wraps(flow_body)
    def wrapper(*args, **kwargs):
        try:
            return flow_body(*args, **kwargs)
        except RefillError as error:
            get_run_logger().error("%s", error)
            return Failed(message=str(error))

    return wrapper


def run_flow(flow, **parameters):
    """Call a flow and return its result; a failed run raises RefillError with its message."""
    with prefect_server.api_for_flows():
        state = flow(**parameters, return_state=True)
    if state.is_completed():
        return state.result()
    if state.is_cancelled():
        raise interrupts.Interrupted(state.message or "interrupted")
    message = (state.message or str(state.type)).removeprefix("Flow run encountered an exception: ")
    raise RefillError(message)


def fault_point_for(fault: str | None, chunk: Chunk, attempt: int) -> str | None:
    """The fault point that applies to this chunk and attempt, if any (see FAULT_ENV)."""
    if not fault:
        return None
    point, _, scope = fault.partition("@")
    where, _, attempts = scope.partition("#")
    if where and where != str(chunk):
        return None
    if attempts and attempt > int(attempts):
        return None
    return point


def fault_from_environment() -> str | None:
    return os.environ.get(FAULT_ENV) or None
