"""The Spark section's figures (bench/spark.py): medians, the ratios with Spark's start-up
included and subtracted, the same-result check, the table and its publication in docs/.

Pure functions of the runs but `publish`, so the arithmetic can be read and tested without
Spark.
"""

from __future__ import annotations

from pathlib import Path

from bench.report import MIB, figures

RESULTS_NAME = "bench-spark-results.json"
PUBLISHED_JSON = "bench-spark-latest.json"
PUBLISH_START = "<!-- bench:spark:start -->"
PUBLISH_END = "<!-- bench:spark:end -->"

CONTENDERS = {
    "spark-startup": "Spark start-up alone: a cold process starts a session, `select 1`, stops",
    "refill-c1": "refill backfill, `--max-concurrency 1`",
    "refill-c2": "refill backfill, `--max-concurrency 2` (a worker process per slot)",
    "refill-c3": "refill backfill, `--max-concurrency 3`",
    "microbatch": "dbt-spark `microbatch`, batch_size day (refill's row rules, no ledger)",
}
# over / under: concurrency 2 and 3 against 1, and refill against dbt-spark's microbatch
RATIOS = (
    "refill-c2/refill-c1",
    "refill-c3/refill-c1",
    "refill-c1/microbatch",
    "refill-c2/microbatch",
    "refill-c3/microbatch",
)


def ratio(over: float, under: float, startup: float | None = None) -> float | None:
    """over / under, or (over - startup) / (under - startup): each contender's one cold
    Spark start-up taken out. None when a side has nothing left after the start-up."""
    if startup is not None:
        over, under = over - startup, under - startup
    if under <= 0 or over <= 0:
        return None
    return over / under


def summarise(runs: list[dict], per_day: dict[str, dict], reconciliation: dict) -> dict:
    """The figures of a Spark bench run. `per_day` holds each contender's published days
    (bench.spark.published_days); `reconciliation` bench.reconcile's summaries of each
    contender against refill at concurrency 1."""
    contenders = {}
    for key in CONTENDERS:
        chosen = [run for run in runs if run["contender"] == key]
        if chosen:
            contenders[key] = figures(chosen)
            contenders[key]["days"] = chosen[0]["days"]
            on_cluster = sorted(
                run["details"]["cluster_cpu_seconds"]
                for run in chosen
                if "cluster_cpu_seconds" in run.get("details", {})
            )
            if on_cluster:  # the cluster's CPU while it ran (median)
                contenders[key]["cluster_cpu_seconds"] = on_cluster[len(on_cluster) // 2]
            if chosen[0]["days"]:
                contenders[key]["per_day_seconds"] = (
                    contenders[key]["wall_seconds"] / (chosen[0]["days"])
                )
    startup = contenders.get("spark-startup")
    ratios = {}
    for name in RATIOS:
        over, under = (contenders.get(key) for key in name.split("/"))
        if not (over and under):
            continue
        ratios[name] = {
            "wall": ratio(over["wall_seconds"], under["wall_seconds"]),
            "cpu": ratio(over["cpu_seconds"], under["cpu_seconds"]),
            "wall_without_startup": ratio(
                over["wall_seconds"], under["wall_seconds"], startup["wall_seconds"]
            )
            if startup
            else None,
            "cpu_without_startup": ratio(
                over["cpu_seconds"], under["cpu_seconds"], startup["cpu_seconds"]
            )
            if startup
            else None,
        }
    return {
        "contenders": contenders,
        "ratios": ratios,
        "per_day": per_day,
        "differing_days": differing_days(per_day),
        "reconciliation": reconciliation,
    }


def differing_days(per_day: dict[str, dict]) -> dict[str, list[str]]:
    """For each contender, the days whose payments, amounts or quarantine differ from
    refill's at concurrency 1 (the reference): empty when it published the same."""
    reference = per_day.get("refill-c1")
    if reference is None:
        return {}
    return {
        name: sorted(
            day for day in set(days) | set(reference) if days.get(day) != reference.get(day)
        )
        for name, days in per_day.items()
        if name != "refill-c1"
    }


def markdown(summary: dict, parameters: dict, environment: dict) -> str:
    """The results as the block docs/performance.md shows under "On Spark"."""
    contenders = summary["contenders"]
    load_start = ", ".join(f"{value:.1f}" for value in environment["load_average_start"])
    load_end = ", ".join(f"{value:.1f}" for value in environment.get("load_average_end", []))
    packages = environment["packages"]
    lines = [
        f"Measured {environment['measured_at']} on {environment['cpus']} cores, "
        f"{environment['memory_gib']:.0f} GiB, load average {load_start} at the start and "
        f"{load_end} at the end (1, 5, 15 min); {parameters['days']} days × "
        f"{parameters['payments']:,} payments a day of the standard data "
        f"({parameters['landed_mb']:.1f} MB of JSON lines), {parameters['chunk_days']}-day "
        f"chunks, {_where(parameters)}; medians of "
        f"{parameters['repeat']} run(s); refill at `{environment['product_commit']}`, "
        f"dbt-spark {packages.get('dbt-spark')}, pyspark {packages.get('pyspark')}, "
        f"{environment.get('java', 'java ?')}.",
        "",
        "| run | wall | CPU | cluster CPU | peak memory (process tree) | per day | other load |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, title in CONTENDERS.items():
        entry = contenders.get(key)
        if not entry:
            continue
        per_day = f"{entry['per_day_seconds']:.1f} s" if entry.get("per_day_seconds") else "–"
        cluster = entry.get("cluster_cpu_seconds")
        lines.append(
            f"| {title} | {entry['wall_seconds']:.1f} s | {entry['cpu_seconds']:.1f} s | "
            f"{f'{cluster:.1f} s' if cluster is not None else '–'} | "
            f"{entry['peak_rss_bytes'] / MIB:.0f} MiB | {per_day} | "
            f"{entry['other_cores']:.2f} cores |"
        )
    lines += [
        "",
        "| ratio | wall | wall, start-up subtracted | CPU | CPU, start-up subtracted |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, value in summary["ratios"].items():
        cells = [
            f"{value[key]:.2f}" if value[key] is not None else "–"
            for key in ("wall", "wall_without_startup", "cpu", "cpu_without_startup")
        ]
        lines.append(f"| {name} | {' | '.join(cells)} |")
    lines += ["", *_same_result_lines(summary)]
    return "\n".join(lines) + "\n"


def _where(parameters: dict) -> str:
    """Where the contenders ran: the local cluster (its worker's cores, its start-up, paid
    once and apart), or (earlier results) a local Spark in every process."""
    if "worker_cores" in parameters:
        return (
            f"on the local cluster (tools/spark_cluster.py: one worker with "
            f"{parameters['worker_cores']} cores, executor {parameters['executor_memory']}, "
            f"Thrift Server driver {parameters['driver_memory']}; started once in "
            f"{parameters['cluster_start_seconds']:.0f} s, not in any contender's time)"
        )
    return f"`spark.master={parameters['master']}` in every process"


def _same_result_lines(summary: dict) -> list[str]:
    lines = []
    for name, days in summary["differing_days"].items():
        reconciliation = summary["reconciliation"].get(name) or {}
        if days:
            lines.append(
                f"- {name} against refill-c1: **{len(days)} day(s) differ** "
                f"({', '.join(days[:5])}); per payment: "
                f"{reconciliation.get('unexplained', '?')} unexplained."
            )
        else:
            lines.append(
                f"- {name} against refill-c1: the same payments, amounts, amounts in USD and "
                f"quarantined lines on every day; payment by payment "
                f"{reconciliation.get('identical_days', '?')} of "
                f"{reconciliation.get('days', '?')} days identical, "
                f"{reconciliation.get('unexplained', '?')} unexplained differences."
            )
    return lines


def publish(out: Path, docs: Path, table: str) -> None:
    """Copy the results into docs/: the JSON, and the table into performance.md between
    its Spark markers."""
    (docs / PUBLISHED_JSON).write_text((out / RESULTS_NAME).read_text())
    page = docs / "performance.md"
    text = page.read_text()
    if PUBLISH_START not in text or PUBLISH_END not in text:
        raise ValueError(f"{page} has no {PUBLISH_START} ... {PUBLISH_END} block to replace")
    before, rest = text.split(PUBLISH_START, 1)
    _, after = rest.split(PUBLISH_END, 1)
    page.write_text(f"{before}{PUBLISH_START}\n{table}{PUBLISH_END}{after}")
