"""The benchmark's Spark section, on the local Spark cluster (tools/spark_cluster.py, the
`spark-cluster` target): `refill backfill` at concurrency 1, 2 and 3 against dbt-spark's own
`microbatch` strategy on the same landing and the same cluster, side by side in one run.
Needs the spark extra and Java (`make setup-spark`); `make bench` never runs it.

    python -m bench.run --spark              # 12 days × 2,000 payments, 2-day chunks, 1 run
    python -m bench.spark --days 4 --payments 500 --repeat 1
    python -m bench.spark --publish          # also bench/results/, docs/performance.md

The cluster (a master, one worker with --cores cores, a Thrift Server) is started once,
timed apart, and stopped at the end; every contender is a cold client process on an emptied
warehouse of it, so none pays a Spark start-up:
  refill-c1      python -m refill backfill --chunk-days N --max-concurrency 1
  refill-c2      the same at --max-concurrency 2 (two worker processes, a connection each)
  refill-c3      the same at --max-concurrency 3 (the warehouse's Prefect limit set to 3)
  microbatch     dbt build of bench/spark_microbatch_project (dbt-spark's microbatch,
                 batch_size day, refill's own row rules) with --event-time-start/-end
A contender's CPU is its own processes'; the cluster's CPU while it ran is in its details.

Writes bench/out/spark/bench-spark-results.{json,md}. How to read it: docs/performance.md,
"On Spark".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from importlib import metadata
from pathlib import Path

import duckdb

from bench import reconcile
from bench.contenders import (
    _BACKFILL_SUMMARY,
    BENCH_DIR,
    REPO_DIR,
    Run,
    Workbench,
    microbatch_rule_vars,
)
from bench.landing import LandingSize, ensure_landing, landed_bytes
from bench.report import PERFORMANCE_PAGE, RESULTS_DIR
from bench.spark_report import RESULTS_NAME, markdown, publish, summarise
from tools import spark_cluster

SPARK_MICROBATCH_PROJECT = BENCH_DIR / "spark_microbatch_project"
DEFAULT_OUT = REPO_DIR / "bench" / "out" / "spark"
FIRST_DAY = date(2025, 1, 1)  # inside the fx seed (2024-01-01 .. 2027-12-31)


@dataclass
class SparkBenchConfig:
    # 12 days × 2,000 payments in 2-day chunks: six chunks, so concurrency 1, 2 and 3 run
    # them in six, three and two rounds; a chunk costs tens of seconds on the cluster here,
    # whatever its size, so more days would measure the same overheads for longer.
    days: int = 12
    payments: int = 2_000
    chunk_days: int = 2
    repeat: int = 1
    start: date = FIRST_DAY
    cores: int = spark_cluster.DEFAULT_CORES  # the worker's
    concurrencies: tuple[int, ...] = (1, 2, 3)

    @property
    def end(self) -> date:
        return self.start + timedelta(days=self.days - 1)


@dataclass
class SparkTables:
    """Where a contender's published rows and quarantined lines are, as parquet folders,
    and the filter that picks the quarantined lines out of the second."""

    payments: Path
    quarantine: Path
    quarantine_where: str = "true"


def refill_tables(warehouse: Path) -> SparkTables:
    return SparkTables(
        warehouse / "main.db" / "fct_payments", warehouse / "main.db" / "payments_quarantine"
    )


def microbatch_tables(warehouse: Path) -> SparkTables:
    # payments_quarantine is a view there: its rows are the classified lines' quarantined ones
    return SparkTables(
        warehouse / "main.db" / "fct_payments",
        warehouse / "main.db" / "stg_payments__lines",
        "line_status = 'quarantined'",
    )


def _load(connection, catalog: str, tables: SparkTables) -> None:
    """The contender's parquet files as tables of `catalog`.main (DuckDB's parquet reader:
    it shares no code with either Spark build), named as bench.reconcile reads them."""
    connection.execute(f"attach ':memory:' as {catalog}")
    for name, folder, where in (
        ("fct_payments", tables.payments, "true"),
        ("payments_quarantine", tables.quarantine, tables.quarantine_where),
    ):
        connection.execute(
            f"create table {catalog}.main.{name} as select * from "
            f"read_parquet(?, hive_partitioning = true) where {where}",
            [str(folder / "**" / "*.parquet")],
        )


def published_days(tables: SparkTables, start: date, end: date) -> dict[str, dict]:
    """Per day of [start, end]: payments, their amount and amount in USD, quarantined lines."""
    with duckdb.connect() as connection:
        _load(connection, "published", tables)
        rows = connection.execute(
            """
            with days as (
                select range::date as day from range($start::date, $end::date + 1, interval 1 day)
            ),
            facts as (
                select cast(event_date as date) as day, count(*) as payments,
                    sum(amount) as amount, sum(amount_usd) as amount_usd
                from published.main.fct_payments group by 1
            ),
            quarantine as (
                select cast(landed_date as date) as day, count(*) as quarantined
                from published.main.payments_quarantine group by 1
            )
            select days.day, coalesce(payments, 0), coalesce(amount, 0)::varchar,
                coalesce(amount_usd, 0)::decimal(38, 2)::varchar, coalesce(quarantined, 0)
            from days
            left join facts using (day)
            left join quarantine using (day)
            order by days.day
            """,
            {"start": start, "end": end},
        ).fetchall()
    return {
        day.isoformat(): {
            "rows": payments,
            "amount": amount,
            "amount_usd": amount_usd,
            "quarantined": quarantined,
        }
        for day, payments, amount, amount_usd, quarantined in rows
    }


def compare_days(
    refill: SparkTables, other: SparkTables, start: date, end: date
) -> list[reconcile.DayComparison]:
    """Each day as refill and another contender published it, payment by payment
    (bench.reconcile's comparison, on the two contenders' parquet files)."""
    with duckdb.connect() as connection:
        _load(connection, "refill_warehouse", refill)
        _load(connection, "plain_warehouse", other)
        rows = connection.execute(
            reconcile.PER_DAY_SQL,
            {"start": start, "end": end, "conflict_prefix": reconcile.CONFLICT_REASON_PREFIX},
        ).fetchall()
    return [reconcile.DayComparison(*row) for row in rows]


def totals(days: dict[str, dict]) -> dict:
    """The range's published totals, as the DuckDB bench's `published` figures."""
    from decimal import Decimal

    return {
        "rows": sum(day["rows"] for day in days.values()),
        "amount": str(sum(Decimal(day["amount"]) for day in days.values())),
        "amount_usd": str(sum(Decimal(day["amount_usd"]) for day in days.values())),
        "quarantined": sum(day["quarantined"] for day in days.values()),
    }


def fresh_folder(bench: Workbench, role: str, name: str) -> Path:
    folder = bench.role_dir(role) / name
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def cluster_env(cluster: spark_cluster.Cluster, locks: Path) -> dict[str, str | None]:
    return {**cluster.environment(), "REFILL_SPARK_WAREHOUSE": str(locks), "REFILL_WAREHOUSE": None}


def cluster_cpu_seconds(cluster: spark_cluster.Cluster) -> float:
    """CPU seconds of the cluster's processes so far (the Thrift Server's driver, the
    worker and its executors, the master)."""
    import psutil

    total = 0.0
    for pid in cluster.pids.values():
        try:
            root = psutil.Process(pid)
            for process in [root, *root.children(recursive=True)]:
                times = process.cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
        except psutil.Error:
            continue
    return total


def kept_tables(cluster: spark_cluster.Cluster, bench: Workbench, role: str) -> Path:
    """The contender's published tables copied out of the cluster's warehouse (the next
    contender empties it), for the reconciliation at the end."""
    import shutil

    kept = fresh_folder(bench, role, "published")
    warehouse = Path(cluster.state) / "warehouse" / "main.db"
    for table in ("fct_payments", "payments_quarantine", "stg_payments__lines"):
        if (warehouse / table).is_dir():
            shutil.copytree(warehouse / table, kept / "main.db" / table)
    return kept


def on_cluster(
    bench: Workbench,
    cluster: spark_cluster.Cluster,
    role: str,
    name: str,
    command: list[str],
    cwd: Path,
    landing: Path,
) -> tuple[object, dict]:
    """Run one contender on an emptied warehouse of the cluster, measured; returns the
    measurement and the cluster's CPU seconds meanwhile."""
    spark_cluster.reset(cluster)
    locks = fresh_folder(bench, role, "locks")
    before = cluster_cpu_seconds(cluster)
    measurement = bench.measure(
        role, name, command, cwd, landing, locks, env=cluster_env(cluster, locks)
    )
    return measurement, {"cluster_cpu_seconds": round(cluster_cpu_seconds(cluster) - before, 1)}


def refill_backfill(
    bench: Workbench,
    cluster: spark_cluster.Cluster,
    config: SparkBenchConfig,
    landing: Path,
    concurrency: int,
    name: str,
) -> tuple[Run, dict]:
    role = f"refill-c{concurrency}"
    command = [bench.python, "-m", "refill", "backfill"]
    command += ["--start", config.start.isoformat(), "--end", config.end.isoformat()]
    command += ["--chunk-days", str(config.chunk_days), "--max-concurrency", str(concurrency)]
    measurement, details = on_cluster(
        bench, cluster, role, name, command, bench.product_dir, landing
    )
    kept = kept_tables(cluster, bench, role)
    days = published_days(refill_tables(kept), config.start, config.end)
    summary = _BACKFILL_SUMMARY.search(Path(measurement.log).read_text(errors="replace"))
    details.update({"warehouse": str(kept), "per_day": days, "concurrency": concurrency})
    if summary:
        details["flow_seconds"] = float(summary["seconds"])
    label = f"refill backfill {config.days}d, --max-concurrency {concurrency}"
    return Run(role, label, config.days, measurement, totals(days), details), days


def microbatch(
    bench: Workbench,
    cluster: spark_cluster.Cluster,
    config: SparkBenchConfig,
    landing: Path,
    name: str,
) -> tuple[Run, dict]:
    role = "microbatch"
    command = bench.dbt_command(
        role,
        SPARK_MICROBATCH_PROJECT,
        "build",
        "--event-time-start",
        config.start.isoformat(),
        "--event-time-end",
        (config.end + timedelta(days=1)).isoformat(),  # exclusive
        "--vars",
        microbatch_rule_vars(),
    )
    measurement, details = on_cluster(
        bench, cluster, role, name, command, SPARK_MICROBATCH_PROJECT, landing
    )
    kept = kept_tables(cluster, bench, role)
    days = published_days(microbatch_tables(kept), config.start, config.end)
    label = f"dbt-spark microbatch {config.days}d"
    details.update({"warehouse": str(kept), "per_day": days})
    return Run(role, label, config.days, measurement, totals(days), details), days


def allow_slots(api_url: str, slots: int) -> None:
    """The warehouse's Prefect concurrency limit (settings.WAREHOUSE_LIMIT_NAME) created with
    `slots` on the bench's own server, so --max-concurrency 3 really runs three chunks."""
    import subprocess

    code = (
        "from flows.scheduler import ensure_warehouse_limit; from refill import settings; "
        f"ensure_warehouse_limit(settings.WAREHOUSE_LIMIT_NAME, {slots})"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PREFECT_API_URL": api_url},
        cwd=REPO_DIR,
        check=True,
        timeout=300,
    )


def run_spark_bench(config: SparkBenchConfig, out: Path, product_dir: Path, log=print) -> dict:
    """Start the cluster, measure the contenders on it, stop it; return the results (also
    written)."""
    from bench.run import describe_environment, start_prefect_server

    out.mkdir(parents=True, exist_ok=True)
    clock = time.monotonic()
    landing = out / f"landing-{config.days}x{config.payments}"
    ensure_landing(landing, LandingSize(config.start, config.days, config.payments))
    parameters = {
        "days": config.days,
        "payments": config.payments,
        "chunk_days": config.chunk_days,
        "repeat": config.repeat,
        "start": config.start.isoformat(),
        "worker_cores": config.cores,
        "executor_memory": spark_cluster.DEFAULT_EXECUTOR_MEMORY,
        "driver_memory": spark_cluster.DEFAULT_DRIVER_MEMORY,
        "landed_mb": landed_bytes(landing) / 1e6,
    }
    environment = describe_environment(product_dir)
    environment["packages"].update({name: _version(name) for name in ("dbt-spark", "pyspark")})
    environment["java"] = _java_version()
    runs: list[Run] = []

    def record(run: Run) -> None:
        runs.append(run)
        # kept as they come: a run that fails later leaves the measured ones readable
        (out / "runs-so-far.json").write_text(
            json.dumps([done.to_json() for done in runs], indent=2, default=str) + "\n"
        )
        m = run.measurement
        log(
            f"bench spark [{len(runs)}] {run.contender} {run.label}: {m.wall_seconds:.1f}s wall, "
            f"{m.cpu_seconds:.1f}s CPU (+{run.details['cluster_cpu_seconds']:.1f}s on the "
            f"cluster), {m.peak_rss_bytes / 1024**2:.0f} MiB peak, others {m.other_cores:.2f} cores"
        )

    state = out / "cluster"
    started = time.monotonic()
    cluster = spark_cluster.start(state, cores=config.cores)
    parameters["cluster_start_seconds"] = round(time.monotonic() - started, 1)
    log(f"bench spark: cluster up in {parameters['cluster_start_seconds']}s, {config.cores} cores")
    server, server_seconds = start_prefect_server(out)
    parameters["prefect_server_start_seconds"] = server_seconds
    bench = Workbench(out=out, product_dir=product_dir, prefect_api_url=server.api_url)
    per_day: dict[str, dict] = {}
    try:
        allow_slots(server.api_url, max(config.concurrencies))
        # Repetitions interleave the contenders, so a busy minute does not fall on one only.
        for repetition in range(1, config.repeat + 1):
            name = f"run{repetition}"
            for concurrency in config.concurrencies:
                run, per_day[run_key(concurrency)] = refill_backfill(
                    bench, cluster, config, landing, concurrency, name
                )
                record(run)
            run, per_day["microbatch"] = microbatch(bench, cluster, config, landing, name)
            record(run)
    finally:
        server.stop()
        spark_cluster.stop(state)

    folders = {
        run.contender: Path(run.details["warehouse"])
        for run in runs
        if run.details.get("warehouse")
    }
    others = [run_key(concurrency) for concurrency in config.concurrencies[1:]] + ["microbatch"]
    reconciliation = {
        other: reconcile.summarise(
            compare_days(
                refill_tables(folders["refill-c1"]),
                (microbatch_tables if other == "microbatch" else refill_tables)(folders[other]),
                config.start,
                config.end,
            )
        )
        for other in others
    }
    environment["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    environment["load_average_end"] = list(os.getloadavg())
    environment["total_seconds"] = round(time.monotonic() - clock, 1)
    return write_results(
        out, parameters, environment, [run.to_json() for run in runs], per_day, reconciliation
    )


def run_key(concurrency: int) -> str:
    return f"refill-c{concurrency}"


def write_results(
    out: Path,
    parameters: dict,
    environment: dict,
    runs: list[dict],
    per_day: dict,
    reconciliation: dict,
) -> dict:
    summary = summarise(runs, per_day, reconciliation)
    results = {
        "parameters": parameters,
        "environment": environment,
        "summary": summary,
        "runs": runs,
    }
    (out / RESULTS_NAME).write_text(json.dumps(results, indent=2, default=str) + "\n")
    (out / RESULTS_NAME.replace(".json", ".md")).write_text(
        markdown(summary, parameters, environment)
    )
    return results


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _java_version() -> str:
    import subprocess

    try:
        done = subprocess.run(
            ["java", "-version"], capture_output=True, text=True, check=False, timeout=60
        )
    except OSError:
        return "not found"
    return (done.stderr or done.stdout).splitlines()[0] if (done.stderr or done.stdout) else ""


def parse_args(argv: list[str] | None) -> tuple[SparkBenchConfig, argparse.Namespace]:
    parser = argparse.ArgumentParser(
        prog="python -m bench.spark", description=__doc__.splitlines()[0]
    )
    defaults = SparkBenchConfig()
    parser.add_argument("--days", type=int, default=defaults.days)
    parser.add_argument("--payments", type=int, default=defaults.payments)
    parser.add_argument("--chunk-days", type=int, default=defaults.chunk_days)
    parser.add_argument("--repeat", type=int, default=defaults.repeat)
    parser.add_argument("--cores", type=int, default=defaults.cores, help="the worker's cores")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--product-dir", type=Path, default=REPO_DIR)
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="re-render the table from --out's results, measure nothing",
    )
    parser.add_argument(
        "--publish",
        action="store_true",
        help="also copy the results to bench/results/ and the table to docs/performance.md",
    )
    args = parser.parse_args(argv)
    if args.days < 2 or args.repeat < 1 or not 1 <= args.chunk_days < args.days:
        parser.error("need --days >= 2, --repeat >= 1 and 1 <= --chunk-days < --days")
    config = SparkBenchConfig(
        days=args.days,
        payments=args.payments,
        chunk_days=args.chunk_days,
        repeat=args.repeat,
        cores=args.cores,
    )
    return config, args


def main(argv: list[str] | None = None) -> int:
    config, args = parse_args(argv)
    out = args.out.resolve()
    if args.report_only:
        earlier = json.loads((out / RESULTS_NAME).read_text())
        results = write_results(
            out,
            earlier["parameters"],
            earlier["environment"],
            earlier["runs"],
            earlier["summary"]["per_day"],
            earlier["summary"]["reconciliation"],
        )
    else:
        print(
            f"bench spark: {config.days} days × {config.payments} payments, "
            f"{config.chunk_days}-day chunks, {config.repeat} run(s), on a local cluster "
            f"(a worker with {config.cores} cores)",
            flush=True,
        )
        results = run_spark_bench(config, out, args.product_dir.resolve())
    table = (out / RESULTS_NAME.replace(".json", ".md")).read_text()
    print(table)
    print(f"bench spark: results in {out} ({results['environment']['total_seconds']:.0f}s)")
    if args.publish:
        publish(out, RESULTS_DIR, PERFORMANCE_PAGE, table)
        print(f"bench spark: published to {RESULTS_DIR} and {PERFORMANCE_PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
