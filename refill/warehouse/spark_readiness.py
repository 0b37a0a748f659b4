"""The readiness verdict on Spark: recorded where a plain `dbt build` can read it.

On DuckDB, dbt asks the rule (refill.rules.readiness) through SQL functions the plugin
registers on the connection. dbt-spark's session method has no such hook, so on Spark
refill records each day's verdict, with the sha256 of every part file it judged, in the
append-only table ops.readiness_verdicts (the latest recording of a day wins). The
staging gate (spark__refill_window_readiness) refuses a day without a `ready` verdict,
naming the day and the command below, and the line reader (spark__refill_read_landed_lines)
checks the bytes it reads against the recorded sha256 (Spark's sha2): a file rewritten
after its verdict stops the build instead of being computed unverified.

Each day's reference fingerprint (what it reads of the seeds, refill.rules.reference) is
recorded beside its verdict, with the sha256 of the seed files it was computed from: the
staging model checks those against the loads ops.seed_loads records (Spark's sha2 of the
file loaded), so a ledger never names rates the warehouse did not load.

refill's flows on Spark call record_verdicts on their own session before each chunk;
from a shell: `python -m refill.warehouse.spark_readiness payments 2026-01-01 2026-01-07`.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, date, datetime

from refill import settings
from refill.rules import readiness, reference
from refill.warehouse import partition_locks

# profiles.yml's `spark` target reads the same variable with the same default.
SPARK_WAREHOUSE_ENV = "REFILL_SPARK_WAREHOUSE"
DEFAULT_SPARK_WAREHOUSE = "warehouse/spark"
VERDICTS_FOLDER = "ops.db/readiness_verdicts"  # where the catalog's ops.readiness_verdicts lives
VERDICT_SCHEMA = (
    "dataset string, day date, is_ready boolean, reason string, part_file string,"
    " part_sha256 string, manifest_files bigint, manifest_records bigint, exported_at string,"
    " source_fingerprint string, recorded_at timestamp, reference_fingerprint string,"
    " seed_contents string"
)  # the same columns as refill_spark_verdict_columns (macros/ops/)


def verdict_rows(
    dataset: str, start: date, end: date, recorded_at: datetime, reads=None
) -> list[tuple]:
    """One row per day and part file (one row with no file for a day without any). `reads`:
    what the dataset's days read of the seeds; by default its declaration in the project."""
    root = settings.landing_root()
    if reads is None:
        reads = _declared_reads(dataset)
    fingerprints, contents = reference.window_fingerprints(reads, start, end)
    seed_contents = ",".join(sorted(f"{seed_id}={sha}" for seed_id, sha in contents.items()))
    rows = []
    for verdict in readiness.window_readiness(root, dataset, start, end):
        day_fields = (dataset, verdict.day, verdict.is_ready, verdict.reason)
        tail = (
            verdict.manifest_files,
            verdict.manifest_records,
            verdict.exported_at,
            verdict.source_fingerprint,
            recorded_at,
            fingerprints[verdict.day],
            seed_contents,
        )
        if not verdict.is_ready or not verdict.part_files:
            rows.append((*day_fields, None, None, *tail))
            continue
        for part in verdict.part_files:
            digest = readiness.part_summary(root / part).sha256.hex()
            rows.append((*day_fields, part, digest, *tail))
    return rows


def _declared_reads(dataset: str):
    from refill.warehouse.dbt_runner import shared_project

    (found,) = [d for d in shared_project().catalog.datasets if d.name == dataset]
    return found.reference


def record_verdicts(spark, dataset: str, start: date, end: date, reads=None) -> int:
    """Append the window's verdicts to ops.readiness_verdicts (by its folder, so any
    process's catalog sees them); returns the number of unready days."""
    rows = verdict_rows(dataset, start, end, datetime.now(UTC).replace(tzinfo=None), reads)
    folder = spark.conf.get("spark.sql.warehouse.dir").rstrip("/") + "/" + VERDICTS_FOLDER
    with partition_locks.appends_in_turn(spark.conf.get("spark.sql.warehouse.dir")):
        spark.createDataFrame(rows, VERDICT_SCHEMA).write.mode("append").parquet(folder)
    return len({row[1] for row in rows if not row[2]})


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(
            "usage: python -m refill.warehouse.spark_readiness DATASET START END", file=sys.stderr
        )
        return 2
    dataset = argv[0]
    start, end = date.fromisoformat(argv[1]), date.fromisoformat(argv[2])
    from pyspark.sql import SparkSession

    warehouse = os.environ.get(SPARK_WAREHOUSE_ENV, DEFAULT_SPARK_WAREHOUSE)
    spark = (
        SparkSession.builder.master(os.environ.get("REFILL_SPARK_MASTER", "local[1]"))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.catalogImplementation", "in-memory")
        .config("spark.sql.warehouse.dir", warehouse)
        .getOrCreate()
    )
    unready = record_verdicts(spark, dataset, start, end)
    print(f"refill readiness: {dataset} {start}..{end} recorded, {unready} day(s) not ready")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
