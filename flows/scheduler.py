"""Chunks in parallel under limits, on an engine with concurrent writers (Spark).

`--max-concurrency N` runs up to N chunks of a backfill at once:
- one worker process per slot, each with its own warehouse session (its own SparkSession:
  dbt is not safe in several threads of one process, and dbt-spark's temporary views are
  per session), running its chunks in-process with dbtRunner, so the engine's start-up
  (tens of seconds for Spark's JVM, docs/spark.md) is paid once per slot, not per chunk;
- a named Prefect global concurrency limit (settings.WAREHOUSE_LIMIT_NAME) holds the
  warehouse's slots, so two backfills on one warehouse share them; each chunk occupies one
  slot while it builds;
- which chunk starts, and when, is refill.rules.schedule's rule (never more than N, never
  two chunks over one day, a waiting daily run first), applied by `ParallelChunks`;
- each chunk still takes its days' locks (refill.warehouse.partition_locks) in the worker,
  so a daily run over one of its days waits for it, and the chunk for the daily run.
DuckDB never comes here: its warehouse admits one writer (planning.effective_concurrency).
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.runtime import task_run

from flows.tasks import ChunkFailed, ChunkResult, RunContext, build_chunk, retry_if_transient
from refill import interrupts, settings
from refill.errors import FailedStep
from refill.rules import schedule
from refill.rules.planning import Chunk
from refill.warehouse.dbt_runner import WHAT_TO_DO, shared_project
from refill.warehouse.engine import is_transient, warehouse_at

POLL_SECONDS = 0.2
Choose = Callable[..., Chunk | None]  # schedule.next_to_start's signature


@dataclass
class ParallelChunks:
    """Starts chunks as `choose` allows (refill.rules.schedule.next_to_start) and waits for
    them: `start(chunk)` returns a future of its outcome, `finished(chunk, future, running)`
    accounts for it. `may_start(chunk)` False stops starting new chunks (a day not ready);
    an exception from it (a stop asked) is raised once the running chunks have finished."""

    limit: int
    start: Callable[[Chunk], concurrent.futures.Future]
    finished: Callable[[Chunk, concurrent.futures.Future, list[Chunk]], None]
    may_start: Callable[[Chunk], bool] = lambda chunk: True
    live_waiting: Callable[[], bool] = lambda: False
    choose: Choose = schedule.next_to_start
    on_start: Callable[[Chunk, list[Chunk]], None] = lambda chunk, running: None
    running: dict[concurrent.futures.Future, Chunk] = field(default_factory=dict)
    # One at a time until a chunk published: the backfill's models have no table yet, and
    # two sessions creating one table or view in a cluster's metastore at once fail (Spark
    # replaces a view by dropping and creating it; "if not exists" checks, then creates).
    first_alone: bool = False
    published_one: bool = False

    def run(self, chunks: Sequence[Chunk]) -> None:
        pending = list(chunks)
        stopping: BaseException | None = None
        while pending or self.running:
            if stopping is None:
                try:
                    pending = self._start_what_may(pending)
                except BaseException as error:  # a stop asked: finish what runs, then stop
                    stopping, pending = error, []
            if not self.running:
                if pending:
                    time.sleep(POLL_SECONDS)  # a daily run goes first; then the plan resumes
                continue
            done, _ = concurrent.futures.wait(
                self.running, timeout=POLL_SECONDS, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in done:
                chunk = self.running.pop(future)
                self.finished(chunk, future, list(self.running.values()))
                self.published_one = self.published_one or future.exception() is None
        if stopping is not None:
            raise stopping

    def _start_what_may(self, pending: list[Chunk]) -> list[Chunk]:
        limit = 1 if self.first_alone and not self.published_one else self.limit
        while True:
            running = list(self.running.values())
            chunk = self.choose(pending, running, limit, live_waiting=self.live_waiting())
            if chunk is None:
                return pending
            if not self.may_start(chunk):
                return []
            pending = [other for other in pending if other != chunk]
            self.running[self.start(chunk)] = chunk
            self.on_start(chunk, [*running, chunk])


# -- the flow's side: slots, worker processes, one Prefect task run per chunk ----------------


def describe(chunks: Collection[Chunk]) -> str:
    return ", ".join(str(chunk) for chunk in sorted(chunks, key=lambda c: c.start)) or "-"


def ensure_warehouse_limit(name: str, slots: int) -> None:
    """Create the warehouse's global concurrency limit when it does not exist; an existing
    one is left as an operator set it (its slots bind every backfill on the warehouse)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            client.create_global_concurrency_limit(
                GlobalConcurrencyLimitCreate(name=name, limit=slots)
            )


@dataclass
class WorkerOutcome:
    """What a worker sends back (ChunkFailed's advice does not survive a pickle)."""

    result: ChunkResult | None = None
    message: str = ""
    transient: bool = False
    failed_step: str = str(FailedStep.OTHER)
    what_to_do: str = WHAT_TO_DO["other"]
    recorded: bool = True


_STARTUP_SECONDS: float | None = None


def start_worker(environment: dict[str, str]) -> None:
    """A worker process's start: the parent's settings, Ctrl-C left to the parent (a chunk
    once started commits or fails whole), and the warehouse session opened now (on Spark,
    the JVM: its cost is measured apart and reported with the worker's first chunk)."""
    global _STARTUP_SECONDS
    os.environ.update(environment)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    clock = time.monotonic()
    warehouse_at().start_session()
    _STARTUP_SECONDS = time.monotonic() - clock


def build_in_worker(context: RunContext, chunk: Chunk, attempt: int) -> WorkerOutcome:
    """One chunk in this worker process: build_window's work, in-process (dbtRunner)."""
    global _STARTUP_SECONDS
    logger = logging.getLogger("refill.worker")
    try:
        result = build_chunk(shared_project(), context, chunk, attempt, logger)
    except ChunkFailed as failure:
        return WorkerOutcome(
            None,
            str(failure),
            failure.transient,
            str(failure.failed_step),
            failure.what_to_do,
            failure.recorded,
        )
    except Exception as error:
        # Whatever else a chunk raises (the engine, outside dbt) crosses back to the parent
        # as text: an engine's exception may hold objects that cannot be pickled, and an
        # unpicklable error would fail the whole backfill instead of this chunk.
        return WorkerOutcome(
            None,
            f"chunk {chunk} failed: {type(error).__name__}: " + " ".join(str(error).split())[:500],
            is_transient(error),
            str(FailedStep.OTHER),
            WHAT_TO_DO["other"],
            False,
        )
    if _STARTUP_SECONDS is not None:  # the worker's first chunk carries its start-up
        result = replace(result, startup_seconds=_STARTUP_SECONDS)
        _STARTUP_SECONDS = None
    return WorkerOutcome(result)


@task(name="build-window-in-worker", cache_policy=NO_CACHE, retry_condition_fn=retry_if_transient)
def build_window_in_worker(
    pool: concurrent.futures.Executor, context: RunContext, chunk: Chunk
) -> ChunkResult:
    """One chunk in a worker process, holding one of the warehouse's slots while it builds.
    Raises ChunkFailed as build_window does, so the declared retries apply the same way."""
    from prefect.concurrency.sync import concurrency

    attempt = task_run.run_count or 1
    try:
        with concurrency(
            settings.WAREHOUSE_LIMIT_NAME,
            occupy=1,
            timeout_seconds=context.lock_wait_seconds,
            strict=True,
        ):
            outcome = pool.submit(build_in_worker, context, chunk, attempt).result()
    except TimeoutError:
        raise ChunkFailed(
            f"chunk {chunk} failed at lock: no warehouse slot ({settings.WAREHOUSE_LIMIT_NAME}) "
            f"free after {context.lock_wait_seconds:g}s",
            transient=True,
            failed_step=FailedStep.LOCK,
            what_to_do=WHAT_TO_DO["lock"],
            recorded=False,
        ) from None
    if outcome.result is None:
        raise ChunkFailed(
            outcome.message,
            transient=outcome.transient,
            failed_step=FailedStep(outcome.failed_step),
            what_to_do=outcome.what_to_do,
            recorded=outcome.recorded,
        )
    return outcome.result


@dataclass
class ParallelBuilds:
    """A backfill's chunks on `slots` worker processes (flows.backfill.ChunkLoop.parallel:
    `build` takes the loop, which accounts for each chunk as its serial path does)."""

    slots: int
    first_alone: bool = False  # ParallelChunks.first_alone: the models have no table yet
    pool: concurrent.futures.ProcessPoolExecutor | None = None
    threads: concurrent.futures.ThreadPoolExecutor | None = None

    def __enter__(self) -> ParallelBuilds:
        ensure_warehouse_limit(settings.WAREHOUSE_LIMIT_NAME, settings.WAREHOUSE_SLOTS)
        environment = {**os.environ, **_prefect_environment()}
        self.pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=self.slots,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=start_worker,
            initargs=(environment,),
        )
        # one thread per slot waits for its chunk's Prefect task run (no dbt in them)
        self.threads = concurrent.futures.ThreadPoolExecutor(max_workers=self.slots)
        return self

    def __exit__(self, *exc) -> None:
        if self.threads is not None:
            self.threads.shutdown(wait=True)
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def build(self, loop: Any, chunks: Sequence[Chunk], recheck: Collection[date]) -> None:
        logger = get_run_logger()
        builder = build_window_in_worker.with_options(
            retries=max(loop.retry.attempts - 1, 0), retry_delay_seconds=list(loop.retry.delays)
        )

        def start(chunk: Chunk) -> concurrent.futures.Future:
            run = contextvars.copy_context().run  # the flow run's context, in the thread
            return self.threads.submit(run, builder, self.pool, loop.context, chunk)

        def on_start(chunk: Chunk, running: list[Chunk]) -> None:
            logger.info(
                "chunk %s: started · running %d of %d: %s",
                chunk,
                len(running),
                self.slots,
                describe(running),
            )

        def finished(chunk: Chunk, future: concurrent.futures.Future, running: list[Chunk]):
            try:
                result = future.result()
            except ChunkFailed as failure:
                loop.failed(chunk, failure)
                return
            if result.startup_seconds >= 0.1:  # an engine with a session to start (Spark)
                logger.info(
                    "a worker started its warehouse session in %.1fs", result.startup_seconds
                )
            loop.published(chunk, result, f" · running: {describe(running)}")

        ParallelChunks(
            limit=self.slots,
            start=start,
            finished=finished,
            may_start=lambda chunk: not loop.stopped and loop.may_start(chunk, recheck),
            live_waiting=warehouse_at().live_waiting,
            on_start=on_start,
            first_alone=self.first_alone,
        ).run(chunks)
        interrupts.raise_if_requested("after the running chunks finished")


def _prefect_environment() -> dict[str, str]:
    """The API this run talks to, for the workers (a temporary server is set in-process)."""
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    return {"PREFECT_API_URL": url} if url else {}
