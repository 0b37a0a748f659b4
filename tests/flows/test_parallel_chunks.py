"""`--max-concurrency N` on an engine with concurrent writers: the backfill runs its chunks on
N worker processes (flows/scheduler.py), each chunk holding a slot of the warehouse's Prefect
global concurrency limit, and publishes exactly what the source holds, as the serial run does.

The wiring is exercised here on DuckDB, told for this test that it admits concurrent writers:
the workers are real processes running dbt in-process, and DuckDB's warehouse lock still
serializes their writes (one writer per file), so the result must equal the serial run's.
On Spark the same path writes at once (tests/spark/test_backfill_spark.py)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from harness.concurrency import check_chunks_within_limit, read_writes
from refill.cli import main
from refill.errors import EXIT_OK
from refill.sample_data import DaySpec, write_days
from refill.warehouse import ops
from refill.warehouse.duckdb_engine import DuckDBWarehouse
from tests.helpers import expected_day, published_by_day, query

# The session's Prefect server, as the other flow tests: the slots' events go to a server
# that outlives the test (a command's own temporary server stops with it, and a later
# harness's teardown would wait on events addressed to it).
pytestmark = pytest.mark.usefixtures("prefect_harness")

D1 = date(2026, 2, 1)


def d(n: int) -> date:
    return D1 + timedelta(days=n - 1)


def test_two_workers_publish_exactly_the_source_newest_first(workspace, monkeypatch, caplog):
    write_days(workspace.landing, D1, 6, DaySpec(payments=30))
    monkeypatch.setattr(DuckDBWarehouse, "concurrent_writers", True)

    status = main(
        ["backfill", "--start", str(d(1)), "--end", str(d(6)), "--chunk-days", "2"]
        + ["--max-concurrency", "2"]
    )

    assert status == EXIT_OK
    published = published_by_day(workspace.warehouse)
    for day in (d(n) for n in range(1, 7)):
        truth = expected_day(workspace.landing, day)
        assert published[day] == (truth.published, truth.amount), day
    (recorded,) = query(
        workspace.warehouse,
        "select parameters->>'$.max_concurrency', parameters->>'$.effective_concurrency' "
        "from ops.run_log",
    )
    assert recorded == ("2", "2")
    with ops.connect(workspace.warehouse, read_only=True) as connection:
        writes = read_writes(connection)
    assert sorted((w.chunk_start, w.chunk_end) for w in writes) == [
        (d(1), d(2)),
        (d(3), d(4)),
        (d(5), d(6)),
    ]
    assert check_chunks_within_limit(writes, 2) == []
    # the progress names the chunks running at once
    assert "started · running 2 of 2" in caplog.text


class _EngineError(RuntimeError):
    """An engine's exception holding a lock, as py4j's do: it cannot be pickled."""

    def __init__(self, message: str):
        super().__init__(message)
        import threading

        self.lock = threading.RLock()


def test_a_worker_error_that_cannot_be_pickled_fails_its_chunk_only(monkeypatch):
    import pickle

    from flows import scheduler
    from refill.rules.planning import Chunk

    def engine_fails(*args, **kwargs):
        raise _EngineError("FILE_NOT_EXIST wap.db/x\n  at the JVM")

    monkeypatch.setattr(scheduler, "build_chunk", engine_fails)
    monkeypatch.setattr(scheduler, "shared_project", lambda: None)
    chunk = Chunk(d(1), d(2))
    with pytest.raises(TypeError):
        pickle.dumps(_EngineError("x"))  # what made the whole backfill fail before

    outcome = pickle.loads(pickle.dumps(scheduler.build_in_worker(None, chunk, 1)))

    assert outcome.result is None
    assert outcome.message.startswith(f"chunk {chunk} failed: _EngineError: FILE_NOT_EXIST")
    assert "\n" not in outcome.message
    assert outcome.failed_step == "other" and outcome.recorded is False


def test_the_chunks_that_create_the_tables_run_alone_until_one_published():
    """On a cluster, two sessions creating one table or view in the metastore at once fail
    (Spark drops and creates): while no chunk of a backfill has published, one runs alone."""
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    from flows.scheduler import ParallelChunks
    from refill.rules.planning import Chunk

    chunks = [Chunk(d(n), d(n)) for n in (4, 3, 2, 1)]
    lock = threading.Lock()
    running: set[Chunk] = set()
    alongside: dict[Chunk, int] = {}  # how many others ran when each started

    def build(chunk: Chunk) -> None:
        with lock:
            alongside[chunk] = len(running)
            running.add(chunk)
        time.sleep(0.3)
        with lock:
            running.discard(chunk)
        if chunk == chunks[0]:
            raise RuntimeError("the first chunk failed before it created anything")

    # GIVEN four chunks, two slots, the first chunk failing, on a warehouse without the tables
    with ThreadPoolExecutor(max_workers=4) as pool:
        ParallelChunks(
            limit=2,
            start=lambda chunk: pool.submit(build, chunk),
            finished=lambda chunk, future, others: None,
            first_alone=True,
        ).run(chunks)

    # THEN the failed first chunk ran alone, and so did the next, until one published;
    # then two at once
    assert alongside[chunks[0]] == 0 and alongside[chunks[1]] == 0
    assert sorted(alongside[chunk] for chunk in chunks[2:]) == [0, 1]
