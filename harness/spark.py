"""The harness's Spark subset: the invariants that hold on Spark, checked after a few Spark
scenarios (`python -m harness.run --engine spark`).

The DuckDB harness (harness/driver.py) runs hundreds of seeded events in-process with a
concurrent reader; on Spark every chunk costs tens of seconds, so the subset is a short
fixed list of scenarios, each `refill backfill` run as a user runs it (a process of its own,
`DBT_TARGET=spark-cluster`, a client of the local cluster, tools/spark_cluster.py), and the
checker reads the warehouse after each event through the warehouse boundary
(refill.warehouse.engine: SparkClusterWarehouse.read, a Thrift session), the tables' files
listed afresh as temporary views. The truth is the same independent oracle
(harness.invariants.Truths) and the same check (harness.invariants.check); only the
reader differs, and the invariants that do not hold on Spark are left out, by name, with
the reason (docs/guarantees.md, "Engines").
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from harness import invariants
from harness.invariants import CheckContext, Truths, Violation, WarehouseState
from refill.sample_data import DATASET
from refill.warehouse import partition_locks
from refill.warehouse.engine import ENGINES

# What a Spark scenario's landing holds (small: each chunk on Spark costs tens of seconds).
FIRST_DAY = date(2026, 2, 1)
DAYS = 4
CHUNK_DAYS = 2
PAYMENTS_A_DAY = 60
RUN_TIMEOUT_SECONDS = 1800

# Left out on Spark, and why (docs/guarantees.md "Engines" says the same).
SKIPPED_ON_SPARK = {
    "reader_sees_whole_publishes": "a reader can see one table new and another old, or fail "
    "with FILE_NOT_EXIST, while a chunk's overwrites commit (parquet has no commits)",
    "one_notification_per_key": "the outbox is append-only on Spark (a key's later states "
    "are appended rows); the subset sends no webhook to count deliveries",
    "history_not_lost": "no retention scenario in the subset (the rule is tested on Spark: "
    "tests/spark/test_upkeep_spark.py)",
    "chunking_invariance": "a second full Spark build per scenario would double its time; "
    "tests/spark/test_backfill_spark.py checks Spark's 2-day chunks against the oracle, "
    "which no chunking enters, instead",
}
SPARK_INVARIANTS = tuple(name for name in invariants.INVARIANTS if name not in SKIPPED_ON_SPARK)
# Between a crash and the rerun, the publish order (models first, ledger last) may leave a
# model's new rows without their ledger row: harmless by design (the ledger never claims
# them; the rerun republishes), so this one is checked again once the command ran again.
NOT_CHECKED_AFTER_A_KILL = {
    "ledger_matches_data": "rows may precede their ledger row until the rerun"
}

# The relations the checker reads, as they lie in the warehouse folder (Spark's layout).
RELATIONS = (
    "main.fct_payments",
    "main.payments_quarantine",
    "main.fct_daily_revenue_v1",
    "main.fct_daily_revenue_v2",
    "ops.partition_ledger",
    "ops.run_log",
    "ops.partition_attempts",
)


def _view(relation: str) -> str:
    return "harness_" + relation.replace(".", "__")


def _register_views(connection, folder: Path) -> set[str]:
    """Each relation's files as a temporary view listed now, so this read sees what other
    processes wrote since (a catalog table would keep its first listing); the paths cross
    into SQL as parameters. Returns the relations that have files."""
    present = set()
    for relation in RELATIONS:
        schema, name = relation.split(".")
        table = folder / f"{schema}.db" / name
        if not any(table.rglob("*.parquet")):
            continue
        connection.execute(
            f"create or replace temporary view {_view(relation)} using parquet options (path ?)",
            [str(table)],
        )
        present.add(relation)
    return present


def read_spark_state(folder: Path, tables: Path) -> WarehouseState:
    """harness.invariants.read_state for a Spark warehouse on the cluster (refill's folder
    `folder`, the tables' files under `tables`): the same state, read with Spark SQL through
    the warehouse boundary. Empty when nothing was written yet."""
    holders = partition_locks.holders(folder) if (folder / "locks").is_dir() else {}
    state = WarehouseState(lock_holder=next(iter(holders.values()), None))
    store = ENGINES["spark-cluster"](folder)
    if not store.exists():
        return state
    with store.read(reader="harness") as connection:
        present = _register_views(connection, tables)

        def rows(sql: str, parameters=None) -> list[tuple]:
            return connection.execute(sql, parameters).fetchall()

        for relation, partition_column in invariants.CONSUMER_RELATIONS.items():
            if relation in present:
                state.table_rows[relation.split(".")[1]] = dict(
                    rows(f"select {partition_column}, count(*) from {_view(relation)} group by 1")
                )
        facts = _view("main.fct_payments")
        if "main.fct_payments" in present:
            for day, count, amount in rows(
                f"select event_date, count(*), sum(amount) from {facts} group by 1"
            ):
                state.facts[day] = (count, amount)
            state.duplicated_ids = rows(
                "select concat(transaction_id, ' on ', cast(event_date as string)), count(*) "
                f"from {facts} group by transaction_id, event_date "
                "having count(*) > 1 order by 1 limit 5"
            )
            state.misdated += [
                ("fct_payments", *row)
                for row in rows(
                    "select transaction_id, event_date, concat('event_ts ', cast(event_ts as "
                    f"string)) from {facts} "
                    # the UTC day, whatever the session's zone (the rule's own spelling)
                    "where event_date is distinct from "
                    "date_from_unix_date(cast(floor(unix_seconds(event_ts) / 86400) as int)) "
                    "order by 1 limit 5"
                )
            ]
        quarantine = _view("main.payments_quarantine")
        if "main.payments_quarantine" in present:
            for day, count, distinct_lines in rows(
                "select landed_date, count(*), count(distinct file_name, line_number) "
                f"from {quarantine} group by 1"
            ):
                state.quarantine[day] = count
                state.quarantine_distinct_lines[day] = distinct_lines
            state.misdated += [
                ("payments_quarantine", *row)
                for row in rows(
                    "select concat(file_name, ':', line_number), landed_date, "
                    f"concat('from ', file_name) from {quarantine} "
                    "where not startswith(file_name, concat(?, '/dt=', "
                    "cast(landed_date as string), '/')) order by 1 limit 5",
                    [DATASET],
                )
            ]
        runs = _view("ops.run_log")
        if "ops.partition_ledger" in present:
            in_run_log = (
                f"run_id in (select run_id from {runs} where command not like 'dbt %')"
                if "ops.run_log" in present
                else "false"
            )
            state.ledger = [
                invariants.LedgerEntry(*row)
                for row in rows(
                    "select model_name, partition_date, status, run_id, source_fingerprint, "
                    f"rows_written, source_records, published_at, {in_run_log} "
                    f"from {_view('ops.partition_ledger')}"
                )
            ]
        if "ops.run_log" in present:
            # append-only on Spark: a run's closing row wins (refill.warehouse.ops.RUN_LOG_LATEST)
            state.run_outcomes = dict(
                rows(
                    "select run_id, outcome from (select run_id, outcome, command, "
                    "row_number() over (partition by run_id order by case when ended_at is null "
                    f"then 1 else 0 end, ended_at desc) as state_rank from {runs}) "
                    "where state_rank = 1 and command not like 'dbt %'"
                )
            )
    return state


def read_attempts(folder: Path, tables: Path) -> list[tuple]:
    """ops.partition_attempts: (run_id, chunk_start, chunk_end, attempt, outcome) per chunk
    attempt, in the order they started."""
    store = ENGINES["spark-cluster"](folder)
    with store.read(reader="harness") as connection:
        if "ops.partition_attempts" not in _register_views(connection, tables):
            return []
        return connection.execute(
            "select distinct run_id, chunk_start, chunk_end, attempt, outcome, started_at "
            f"from {_view('ops.partition_attempts')} order by started_at"
        ).fetchall()


def check_spark(
    state: WarehouseState, truths: Truths, context: CheckContext, *, after_kill: bool = False
) -> list[Violation]:
    """harness.invariants.check, keeping the invariants that hold on Spark (after a kill,
    those that hold before the rerun)."""
    kept = set(SPARK_INVARIANTS) - (set(NOT_CHECKED_AFTER_A_KILL) if after_kill else set())
    return [found for found in invariants.check(state, truths, context) if found.invariant in kept]
