"""Prefect tasks shared by the daily and backfill flows: prepare the warehouse, build a
window under the warehouse lock, account for the run (run log, notifications) on every path."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import deployment, task_run
from prefect.states import Failed

from flows import artifacts, prefect_server
from refill import interrupts, options, settings
from refill.errors import FailedStep, RefillError
from refill.rules.failures import WHAT_TO_DO
from refill.rules.planning import Chunk
from refill.rules.window import window_vars
from refill.warehouse import locking, notify, ops, preview_store, run_liveness
from refill.warehouse.dbt_runner import DbtProject, Selection
from refill.warehouse.engine import ENGINE_ERRORS, is_transient, warehouse_at

# Bookkeeping (the run log, an attempt, the outbox) is a few short statements: a run that
# failed waits at least this long for the warehouse to record its failure, even when its
# own --lock-wait was shorter (a lock timeout must still be accounted for).
BOOKKEEPING_LOCK_WAIT_SECONDS = settings.BOOKKEEPING_LOCK_WAIT_SECONDS


class ChunkFailed(RefillError):
    """A window's build failed; the warehouse holds that window's previous state.

    `what_to_do`: the advice for its failure class; `recorded`: whether its attempt row
    is in ops.partition_attempts (a build that never got the warehouse could not write it).
    """

    def __init__(
        self,
        message: str,
        *,
        transient: bool = False,
        failed_step: FailedStep = FailedStep.OTHER,
        what_to_do: str = WHAT_TO_DO["other"],
        recorded: bool = True,
    ):
        super().__init__(message, transient=transient, failed_step=failed_step)
        self.what_to_do = what_to_do
        self.recorded = recorded


@dataclass(frozen=True)
class RunContext:
    """What every task of one flow run shares."""

    run_id: str
    command: str
    priority: str  # locking.LIVE for daily runs, locking.HISTORY for backfills
    is_backfill: bool
    selection: Selection | None  # what the run's chunks build (None: the whole project)
    lock_wait_seconds: float
    # whose ledger rows a chunk reports as its rows: the catalog's facts model, none when unset
    rows_model: str = ""

    def lock(
        self,
        days: list[date] | None = None,
        *,
        wait_seconds: float | None = None,
        on_wait: Callable[[locking.Holder], None] | None = None,
    ) -> contextlib.AbstractContextManager:
        """The warehouse held for this run: for its `days` (None: the whole warehouse),
        waiting the run's --lock-wait unless `wait_seconds` says otherwise."""
        return warehouse_at().lock(
            run_id=self.run_id,
            command=self.command,
            priority=self.priority,
            partitions=days,
            wait_seconds=self.lock_wait_seconds if wait_seconds is None else wait_seconds,
            on_wait=on_wait,
        )


@dataclass(frozen=True)
class ChunkResult:
    chunk: Chunk
    rows: int
    seconds: float
    attempt: int
    # a worker process's first chunk: the seconds its warehouse session took to start
    startup_seconds: float = 0.0


def combined_code_version(versions: dict[str, str]) -> str:
    """One version for a whole run (notification keys): a hash of every model's version."""
    return hashlib.md5(json.dumps(versions, sort_keys=True).encode()).hexdigest()[:12]


def prepare_warehouse(project: DbtProject, context: RunContext) -> None:
    """Load the seeds, and with them create the ops relations (dbt's on-run-start hooks
    run for every invocation): once per flow run, not per chunk, and not at all when the
    warehouse already holds them from seeds and DDL of the same content (ops.seed_loads).
    A fresh warehouse, a changed seed or a changed macro always loads. First, what a
    killed preview left is dropped (never a live one's: preview_store)."""
    warehouse = settings.warehouse_path()
    load_key = project.seed_load_key()
    store = warehouse_at(warehouse)
    with context.lock():
        if warehouse.exists():
            with ops.connect(warehouse) as connection:
                if store.keeps_previews:  # previews exist only there (engine.require_previews)
                    alive = functools.partial(run_liveness.is_alive, warehouse)
                    for preview_id in preview_store.drop_abandoned_previews(connection, alive):
                        get_run_logger().info(
                            "preview %s, left by a killed run: dropped", preview_id
                        )
                if ops.seeds_are_loaded(connection, project.seeds(), load_key):
                    return
        command = ["seed", "--no-write-json", "--vars", json.dumps({"refill_seed_key": load_key})]
        result = project.invoke(command)
        if not result.success:
            from refill.warehouse.dbt_runner import outcome_of

            failure = outcome_of(result)
            raise RefillError(
                f"loading the dbt seeds failed: {failure.message}; nothing was built",
                transient=failure.transient,
                failed_step=FailedStep.BUILD,
            )


def with_warehouse(context: RunContext, work, partitions: list[date] | None = None):
    """Run `work(connection)` holding the warehouse lock, on a short connection. Used for
    bookkeeping: it waits the run's --lock-wait, and at least BOOKKEEPING_LOCK_WAIT_SECONDS."""
    wait_seconds = max(context.lock_wait_seconds, BOOKKEEPING_LOCK_WAIT_SECONDS)
    with (
        context.lock(partitions, wait_seconds=wait_seconds),
        ops.connect(settings.warehouse_path()) as connection,
    ):
        return work(connection)


def retry_if_transient(task, task_run, state) -> bool:
    """Prefect's retry condition for a build: only a failure a pause can fix is retried
    (the warehouse busy, an I/O hiccup). A day not ready, an audit mismatch, unreadable
    data, a compile error or a window refusal fails at once: a retry would fail the same
    way, minutes later. Declared on the task, so a deployment's retries obey it too."""
    try:
        state.result()
    except Exception as error:  # noqa: BLE001 (the failure being judged)
        return is_transient(error)
    return False


@task(name="build-window", cache_policy=NO_CACHE, retry_condition_fn=retry_if_transient)
@interrupts.finishes_before_stopping
def build_window(project: DbtProject, context: RunContext, chunk: Chunk) -> ChunkResult:
    """Build one window under the warehouse lock and record the attempt for each of its days.

    Raises ChunkFailed on failure, classified (failed step, transient or not) from the dbt
    result, so the declared retries apply to transient failures only; the failed dbt
    transaction has already rolled back, so a retry starts from the same state.
    """
    return build_chunk(project, context, chunk, task_run.run_count or 1, get_run_logger())


def build_chunk(
    project: DbtProject, context: RunContext, chunk: Chunk, attempt: int, logger
) -> ChunkResult:
    """build_window's work, without Prefect: a chunk worker process (flows/scheduler.py)
    runs it in-process, with its own warehouse session and a plain logger."""
    clock = time.monotonic()
    warehouse = settings.warehouse_path()
    variables = window_vars(chunk.start, chunk.end, context.run_id, context.is_backfill)

    def on_wait(holder: locking.Holder) -> None:
        logger.info("chunk %s waits for the warehouse, held by %s", chunk, holder.describe())

    try:
        with context.lock(chunk.days, on_wait=on_wait):
            # the last safe point before the build: a stop asked while this chunk waited for
            # the warehouse or between its attempts starts no build
            interrupts.raise_if_requested(f"before chunk {chunk}")
            started = ops.utc_now()  # once the warehouse is ours: the attempt is the build
            logger.info("chunk %s: building (attempt %d)", chunk, attempt)
            outcome = project.build(variables, context.selection, include_seeds=False)
            with ops.connect(warehouse) as connection:
                record_attempt(
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
                    outcome.failed_step,
                )
                rows = ops.read_rows_written(
                    connection, context.rows_model, chunk.start, chunk.end, context.run_id
                )
    except locking.LockTimeout as busy:
        raise ChunkFailed(
            f"chunk {chunk} failed at lock: {busy}",
            transient=True,
            failed_step=FailedStep.LOCK,
            what_to_do=WHAT_TO_DO["lock"],
            recorded=False,
        ) from None
    if not outcome.success:
        raise ChunkFailed(
            f"chunk {chunk} failed at {outcome.failed_step}: {outcome.message}",
            transient=outcome.transient,
            failed_step=outcome.failed_step or FailedStep.OTHER,
            what_to_do=outcome.what_to_do,
        )
    return ChunkResult(chunk, int(rows), time.monotonic() - clock, attempt)


def record_attempt(
    connection, days: list[date], attempt: ops.Attempt, failed_step: FailedStep | None
) -> None:
    """The attempt's rows, with the step that failed (null when published)."""
    ops.record_attempt(
        connection, days, replace(attempt, failed_step=str(failed_step) if failed_step else None)
    )


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
    with_warehouse(
        context, lambda c: record_attempt(c, chunk.days, attempt, FailedStep.INTERRUPTED)
    )


def unrecorded_attempt(
    context: RunContext, chunk: Chunk, failure: ChunkFailed, attempts: int
) -> tuple[list[date], ops.Attempt, FailedStep]:
    """The attempt row of a build that never got the warehouse (its lock wait ran out)."""
    now = ops.utc_now()
    attempt = ops.Attempt(
        context.run_id,
        context.command,
        chunk.start,
        chunk.end,
        attempts,
        "failed",
        str(failure),
        now,
        now,
    )
    return chunk.days, attempt, failure.failed_step


def record_unrecorded_attempt(
    context: RunContext, chunk: Chunk, failure: ChunkFailed, attempts: int
) -> None:
    """Write that row now, waiting for the warehouse as bookkeeping does."""
    row = unrecorded_attempt(context, chunk, failure, attempts)
    try:
        with_warehouse(context, lambda connection: record_attempt(connection, *row))
    except RefillError as error:
        get_run_logger().warning("the failed attempt of %s was not recorded: %s", chunk, error)


def deliver_notifications(context: RunContext) -> int:
    """Deliver the pending notifications no other run has claimed; the warehouse is not
    held while the sinks run."""
    logger = get_run_logger()
    pending = with_warehouse(
        context, lambda connection: notify.claim_pending(connection, context.run_id)
    )
    if not pending:
        return 0
    results = notify.deliver(pending, logger)
    with_warehouse(context, lambda connection: notify.record_deliveries(connection, results))
    return sum(1 for result in results if result.error is None)


@dataclass
class RunAccount:
    """One flow run's entry in ops.run_log, opened once the warehouse is prepared and closed
    on every path, with its notification queued (see `accounted_run`)."""

    context: RunContext
    command_line: str
    parameters: dict
    notification_name: str
    logical_date: date | None
    code_version: str
    partitions: list[date] = field(default_factory=list)
    started: bool = False
    closed: bool = False
    # An attempt the build could not record itself (it never got the warehouse): written
    # with the run's closing row.
    failed_attempt: tuple[list[date], ops.Attempt, FailedStep] | None = None

    def start(self) -> None:
        with_warehouse(
            self.context,
            lambda connection: ops.record_run_start(
                connection,
                self.context.run_id,
                self.context.command,
                self.command_line,
                self.parameters,
            ),
        )
        self.started = True

    def close(self, outcome: str, message: str, *, failure: str = "") -> None:
        """Close the run-log row (opening it first if the run failed before it could),
        record an attempt the build could not, and queue and deliver the notification."""
        notification = notify.Notification(
            self.notification_name,
            self.logical_date,
            outcome,
            self.code_version,
            message,
            failure=failure,
        )

        def work(connection) -> bool:
            if not ops.has_ops(connection):
                return False
            if not self.started:
                ops.record_run_start(
                    connection,
                    self.context.run_id,
                    self.context.command,
                    self.command_line,
                    self.parameters,
                )
            ops.record_run_end(connection, self.context.run_id, outcome, self.partitions, message)
            if self.failed_attempt is not None:
                record_attempt(connection, *self.failed_attempt)
            notify.enqueue(connection, notification)
            return True

        self.closed = True
        logger = get_run_logger()
        try:
            # A warehouse is never created to record a failure; one without ops relations
            # (a first load that failed) has nowhere to record it: the run's log says it.
            recorded = settings.warehouse_path().exists() and with_warehouse(self.context, work)
            if recorded:
                deliver_notifications(self.context)
                return
        except (RefillError, *ENGINE_ERRORS) as error:
            logger.warning("could not record the run's outcome in the warehouse: %s", error)
        # The log sink, as delivery would (an error record: the terminal shows it once,
        # as the command's own line).
        level = logging.INFO if outcome == "succeeded" else logging.ERROR
        logger.log(level, "notify [%s] %s", notification.idempotency_key, message)


def publish_board(window, key: str) -> None:
    """The partition board as a Prefect artifact beside the run; a run's outcome never
    depends on it."""
    if not settings.warehouse_path().exists():
        return
    try:
        artifacts.publish_board(window, key=key)
    except Exception as error:  # noqa: BLE001 (the artifact is a view, not the outcome)
        get_run_logger().warning("the board artifact was not published: %s", error)


@contextlib.contextmanager
def accounted_run(account: RunAccount):
    """Every failure of the block (a refusal, a lock timeout, a seed failure, anything
    unexpected) closes the run-log row and queues a notification, then ends the run with
    one line. The notification's key carries the failure, so a second, different failure
    of the same date is queued too, and a rerun failing the same way adds nothing."""
    try:
        yield account
    except Exception as error:
        if account.closed:
            raise
        failed = as_refill_error(error, account.notification_name)
        if failed is not error:
            get_run_logger().error("unexpected error", exc_info=error)
        step = failed.failed_step
        outcome = "not ready" if step == FailedStep.READINESS else "failed"
        account.close(outcome, str(failed), failure=f"{step}:{failed}")
        raise failed from None


def as_refill_error(error: BaseException, where: str) -> RefillError:
    """A RefillError as it is; anything else as one line that names it (the run's log
    keeps the traceback)."""
    if isinstance(error, RefillError):
        return error
    text = " ".join(str(error).split()) or type(error).__name__
    return RefillError(
        f"{where}: unexpected {type(error).__name__}: {text} (the flow run's log has the "
        "traceback)",
        transient=is_transient(error),
    )


def refusals_fail_the_run(flow_body):
    """A RefillError ends the flow run Failed with its one-line message, without a traceback:
    a refusal or a loud failure is an outcome the run reports, not a crash of refill. The
    error itself is the state's data, so the command line knows its exit status."""

    @functools.wraps(flow_body)
    def wrapper(*args, **kwargs):
        try:
            return flow_body(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 (every failure ends as one line)
            failed = as_refill_error(error, flow_body.__name__)
            if failed is not error:
                get_run_logger().error("unexpected error", exc_info=error)
            message = str(failed)
            if deployment.id is not None:
                # started by a deployment: its parameters' names, not the command line's flags
                message = options.in_deployment_terms(message)
            get_run_logger().error("%s", message)
            return Failed(message=message, data=failed)

    return wrapper


def run_flow(flow, **parameters):
    """Call a flow and return its result; a failed run raises its RefillError (the same
    class, so the same exit status), or a RefillError with the state's message."""
    with prefect_server.api_for_flows():
        state = flow(**parameters, return_state=True)
    if state.is_completed():
        return state.result()
    if state.is_cancelled():
        raise interrupts.Interrupted(state.message or "interrupted")
    try:
        state.result()
    except RefillError:
        raise
    except Exception:  # noqa: BLE001 (said below, on one line)
        pass
    message = (state.message or str(state.type)).removeprefix("Flow run encountered an exception: ")
    raise RefillError(message)
