"""Spark's start-up alone: a cold process that starts a SparkSession with the `spark`
target's settings (refill.warehouse.spark_engine.session), runs one trivial query, stops
the session and exits. The Spark section of the benchmark (bench/spark.py) measures it in
the same run as the contenders, so a reader can subtract it from each of them.

    python -m bench.spark_startup --warehouse /tmp/empty-folder
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.spark_startup", description=__doc__)
    parser.add_argument("--warehouse", type=Path, required=True, help="an empty folder")
    args = parser.parse_args(argv)
    clock = time.monotonic()
    from refill.warehouse import spark_engine

    imported = time.monotonic()
    spark = spark_engine.session(args.warehouse)
    started = time.monotonic()
    assert spark.sql("select 1").collect()[0][0] == 1
    queried = time.monotonic()
    spark.stop()
    stopped = time.monotonic()
    # bench.spark reads these phases from the log
    print(
        f"spark start-up: import {imported - clock:.2f}s, session {started - imported:.2f}s, "
        f"first query {queried - started:.2f}s, stop {stopped - queried:.2f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
