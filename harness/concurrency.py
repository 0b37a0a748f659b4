"""The invariant of parallel chunks, checked from what runs record, on any engine:

- chunks_within_limit   never more chunks writing at once than the limit, never two chunks
                        writing the same day at once

Its evidence is ops.partition_attempts: one row per day of each attempt at a chunk, with
when the attempt's build started and ended (flows/tasks.py records them once the chunk
holds its days, so the interval is the write). Two attempts write at once when their
intervals overlap; the check is a sweep over those intervals, so it needs nothing of the
engine but the recorded rows (`read_writes` reads them on a connection of the warehouse
boundary, DuckDB or Spark). Attempts that never built (attempt 0: stopped while waiting)
wrote nothing and are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from harness.invariants import Violation

INVARIANT = "chunks_within_limit"


@dataclass(frozen=True)
class Write:
    """One attempt at one chunk, as its rows recorded it."""

    run_id: str
    chunk_start: date
    chunk_end: date
    attempt: int
    started_at: datetime
    ended_at: datetime
    days: frozenset[date]

    def __str__(self) -> str:
        return (
            f"run {self.run_id} chunk {self.chunk_start}..{self.chunk_end} attempt {self.attempt} "
            f"({self.started_at.time()}-{self.ended_at.time()})"
        )


ATTEMPT_ROWS = (
    "select run_id, partition_date, chunk_start, chunk_end, attempt, started_at, ended_at "
    "from ops.partition_attempts where attempt > 0 and command = 'backfill'"
)


def read_writes(connection) -> list[Write]:
    """The backfill attempts recorded in ops.partition_attempts, one Write per attempt."""
    return writes_from_rows(connection.execute(ATTEMPT_ROWS).fetchall())


def writes_from_rows(rows: Iterable[tuple]) -> list[Write]:
    """Group attempt rows (run_id, day, chunk_start, chunk_end, attempt, started, ended)."""
    grouped: dict[tuple, set[date]] = {}
    for run_id, day, chunk_start, chunk_end, attempt, started, ended in rows:
        key = (run_id, chunk_start, chunk_end, attempt, started, ended)
        grouped.setdefault(key, set()).add(day)
    return sorted(
        (Write(*key, days=frozenset(days)) for key, days in grouped.items()),
        key=lambda write: (write.started_at, write.run_id, write.chunk_start),
    )


def _at_once(first: Write, second: Write) -> bool:
    # half-open intervals: one chunk ending the instant the next starts is not overlap
    return first.started_at < second.ended_at and second.started_at < first.ended_at


def check_chunks_within_limit(writes: list[Write], limit: int) -> list[Violation]:
    """A violation for each moment more than `limit` chunks wrote at once (reported once per
    group), and for each pair of chunks that wrote a common day at once."""
    violations: list[Violation] = []
    seen_groups: set[frozenset[Write]] = set()
    for write in writes:
        # the chunks writing at the instant `write` starts (the maximum is reached at a start)
        active = frozenset(
            other
            for other in writes
            if other.started_at <= write.started_at < other.ended_at or other is write
        )
        if len(active) > limit and active not in seen_groups:
            seen_groups.add(active)
            violations.append(
                Violation(
                    INVARIANT,
                    f"{len(active)} chunks writing at once (limit {limit}) at "
                    f"{write.started_at}: " + "; ".join(map(str, sorted(active, key=str))),
                )
            )
    for index, first in enumerate(writes):
        for second in writes[index + 1 :]:
            common = first.days & second.days
            if common and _at_once(first, second):
                days = ", ".join(map(str, sorted(common)))
                violations.append(
                    Violation(
                        INVARIANT, f"two chunks wrote day(s) {days} at once: {first}; {second}"
                    )
                )
    return violations


# -- the scheduler and its broken variant, driven on worker processes ------------------------


def over_limit(pending, running, limit, *, live_waiting=False):
    """The broken scheduler: the real rule given one slot more than the limit."""
    from refill.rules import schedule

    return schedule.next_to_start(pending, running, limit + 1, live_waiting=live_waiting)


# name -> (the scheduler, the worker processes it sizes for a given limit)
SCHEDULERS = {
    "real": ("refill.rules.schedule:next_to_start", lambda limit: limit),
    "over_limit": ("harness.concurrency:over_limit", lambda limit: limit + 1),
}


def write_for(seconds: float) -> tuple[datetime, datetime]:
    """A stand-in chunk in a worker process: it writes for `seconds` and says when."""
    import time

    from refill.warehouse.ops import utc_now

    started = utc_now()
    time.sleep(seconds)
    return started, utc_now()


def run_recorded(chunks, limit: int, scheduler: str, connection, run_id: str, seconds: float):
    """Run `chunks` as flows/scheduler.py's ParallelChunks does, on worker processes, with
    the named scheduler, recording each attempt in ops.partition_attempts as a backfill
    does (one row per day, the build's start and end)."""
    import concurrent.futures
    import importlib
    import multiprocessing

    from flows.scheduler import ParallelChunks
    from refill.warehouse import ops

    where, workers = SCHEDULERS[scheduler]
    module, name = where.split(":")
    choose = getattr(importlib.import_module(module), name)

    def finished(chunk, future, running):
        started, ended = future.result()
        attempt = ops.Attempt(
            run_id, "backfill", chunk.start, chunk.end, 1, "published", "", started, ended
        )
        ops.record_attempt(connection, chunk.days, attempt)

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers(limit), mp_context=context) as pool:
        # warm every worker first: a process's start-up is not a chunk's write
        list(pool.map(write_for, [0.0] * workers(limit)))
        ParallelChunks(
            limit=limit,
            start=lambda chunk: pool.submit(write_for, seconds),
            finished=finished,
            choose=choose,
        ).run(chunks)


def run_two_backfills_sharing_slots(
    chunks_a, chunks_b, limit: int, slots: int, connection, *, shared: bool
):
    """Two backfills at once, each running up to `limit` chunks, each chunk holding one slot
    of the warehouse's named Prefect global concurrency limit (`slots` slots) while it writes,
    as flows/scheduler.py's build_window_in_worker does; `shared=False` leaves the limit out
    (what two backfills would do without it). Both record their attempts."""
    import concurrent.futures
    import contextlib
    import contextvars
    import multiprocessing
    import threading

    from prefect.concurrency.sync import concurrency

    from flows.scheduler import ParallelChunks, ensure_warehouse_limit
    from refill import settings
    from refill.warehouse import ops

    if shared:
        ensure_warehouse_limit(settings.WAREHOUSE_LIMIT_NAME, slots)
    recording = threading.Lock()
    context = multiprocessing.get_context("spawn")
    with (
        concurrent.futures.ProcessPoolExecutor(2 * limit, mp_context=context) as pool,
        concurrent.futures.ThreadPoolExecutor(2 * limit) as threads,
    ):
        list(pool.map(write_for, [0.0] * 2 * limit))

        def chunk_in_slot():
            slot = (
                concurrency(settings.WAREHOUSE_LIMIT_NAME, occupy=1, strict=True)
                if shared
                else contextlib.nullcontext()
            )
            with slot:
                return pool.submit(write_for, 0.8).result()

        def backfill(run_id, chunks):
            def finished(chunk, future, running):
                started, ended = future.result()
                attempt = ops.Attempt(
                    run_id, "backfill", chunk.start, chunk.end, 1, "published", "", started, ended
                )
                with recording:
                    ops.record_attempt(connection, chunk.days, attempt)

            ParallelChunks(
                limit=limit,
                start=lambda chunk: threads.submit(contextvars.copy_context().run, chunk_in_slot),
                finished=finished,
            ).run(chunks)

        runs = [
            threading.Thread(target=contextvars.copy_context().run, args=(backfill, name, chunks))
            for name, chunks in (("run-a", chunks_a), ("run-b", chunks_b))
        ]
        for run in runs:
            run.start()
        for run in runs:
            run.join()
