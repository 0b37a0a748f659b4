"""The harness's invariant of parallel chunks (harness/concurrency.py): never more chunks
writing at once than the limit, never two over the same day, checked from the attempts runs
record. The real scheduler passes; the broken one (one slot over the limit) is caught.

Engine-agnostic on purpose: chunks run on worker processes as flows/scheduler.py runs them,
their attempts are recorded by ops.record_attempt in ops.partition_attempts (created from
its columns' one home, macros/ops/refill_ops_columns.sql), and the check reads them back."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import duckdb
import pytest

from harness.concurrency import (
    check_chunks_within_limit,
    read_writes,
    run_recorded,
    run_two_backfills_sharing_slots,
    writes_from_rows,
)
from refill.rules.planning import Chunk
from refill.warehouse.dbt_runner import DbtProject

D0 = date(2026, 3, 1)
CHUNKS = [Chunk(D0 + timedelta(i * 2), D0 + timedelta(i * 2 + 1)) for i in reversed(range(6))]


@pytest.fixture(scope="module")
def attempts_columns(tmp_path_factory) -> str:
    """ops.partition_attempts' columns as dbt creates them (refill_ops_columns, their one
    home), rendered by the project's own macro. A DbtProject of its own: the process's
    shared one would keep this scratch warehouse's manifest for the tests after it."""
    with pytest.MonkeyPatch.context() as patch:  # module-scoped: no function's monkeypatch
        patch.setenv("REFILL_WAREHOUSE", str(tmp_path_factory.mktemp("compile") / "w.duckdb"))
        compiled = DbtProject().invoke(
            ["compile", "--inline", "{{ refill_ops_columns_ddl('partition_attempts') }}"]
        )
    assert compiled.success, compiled.exception
    return compiled.result.results[0].node.compiled_code.strip()


@pytest.fixture
def attempts_table(attempts_columns):
    def create(path) -> duckdb.DuckDBPyConnection:
        connection = duckdb.connect(str(path))
        connection.execute("create schema ops")
        connection.execute(f"create table ops.partition_attempts ({attempts_columns})")
        return connection

    return create


@pytest.mark.parametrize("limit", [1, 2])
def test_the_real_scheduler_keeps_to_the_limit_and_uses_it(attempts_table, tmp_path, limit):
    connection = attempts_table(tmp_path / "w.duckdb")
    run_recorded(CHUNKS, limit, "real", connection, "run-a", seconds=0.6)
    writes = read_writes(connection)
    assert sorted((w.chunk_start, len(w.days)) for w in writes) == sorted(
        (c.start, 2) for c in CHUNKS
    )
    assert check_chunks_within_limit(writes, limit) == []
    # not vacuous: with two slots, two chunks did write at once
    most = max(sum(1 for o in writes if o.started_at <= w.started_at < o.ended_at) for w in writes)
    assert most == limit


def test_the_broken_scheduler_is_caught_exceeding_the_limit_by_one(attempts_table, tmp_path):
    connection = attempts_table(tmp_path / "w.duckdb")
    run_recorded(CHUNKS, 2, "over_limit", connection, "run-b", seconds=0.6)
    violations = check_chunks_within_limit(read_writes(connection), 2)
    assert violations, "three chunks wrote at once and the invariant saw nothing"
    assert all(v.invariant == "chunks_within_limit" for v in violations)
    assert any("3 chunks writing at once (limit 2)" in v.detail for v in violations)


def test_two_chunks_over_one_day_at_once_are_caught():
    t = datetime(2026, 3, 1, 12)
    second = timedelta(seconds=1)
    rows = [
        ("a", D0, D0, D0 + timedelta(1), 1, t, t + 5 * second),
        ("a", D0 + timedelta(1), D0, D0 + timedelta(1), 1, t, t + 5 * second),
        # another backfill over day 2, while the first one writes it
        (
            "b",
            D0 + timedelta(1),
            D0 + timedelta(1),
            D0 + timedelta(1),
            1,
            t + second,
            t + 2 * second,
        ),
        # the same day after the first ended: fine
        ("c", D0, D0, D0, 1, t + 5 * second, t + 6 * second),
    ]
    violations = check_chunks_within_limit(writes_from_rows(rows), 2)
    assert [v.detail.split(":")[0] for v in violations] == [
        f"two chunks wrote day(s) {D0 + timedelta(1)} at once"
    ]


OTHER = [Chunk(D0 + timedelta(30 + i), D0 + timedelta(30 + i)) for i in range(3)]


@pytest.mark.usefixtures("prefect_harness")
def test_two_backfills_share_the_warehouses_slots(attempts_table, tmp_path):
    # each backfill may run two chunks at once; the warehouse has two slots for both
    connection = attempts_table(tmp_path / "w.duckdb")
    run_two_backfills_sharing_slots(CHUNKS[:3], OTHER, 2, 2, connection, shared=True)
    writes = read_writes(connection)
    assert len(writes) == 6
    assert check_chunks_within_limit(writes, 2) == []
    # without the shared limit the same two runs write four chunks at once: caught
    unshared = attempts_table(tmp_path / "u.duckdb")
    run_two_backfills_sharing_slots(CHUNKS[:3], OTHER, 2, 2, unshared, shared=False)
    assert any(
        "chunks writing at once (limit 2)" in v.detail
        for v in check_chunks_within_limit(read_writes(unshared), 2)
    )
