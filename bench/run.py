"""The backfill benchmark: refill against dbt microbatch, the raw DuckDB floor and a naive
loop, on the same landing data, in one run.

    python -m bench.run            # 365 days × 10,000 payments, 3 runs each (`make bench`)
    python -m bench.run --quick    # a few days of a few hundred payments: does it run?
    python -m bench.run --variant realistic   # 0.01% malformed lines, in a few files
    python -m bench.run --only a,e # just those contenders over the range
    python -m bench.run --publish  # also copy the results into bench/results/ and docs/
    python -m bench.run --spark    # the Spark section instead (bench/spark.py; Java)

Writes bench/out/bench-results.{json,md} and bench/out/bench-scaling.png (the realistic
variant: under bench/out/realistic/). What each contender does and skips, and how to
read the figures: docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from importlib import metadata
from pathlib import Path

import psutil

from bench import command, contenders, reconcile, report, row_rule
from bench.contenders import REPO_DIR, Run, Workbench
from bench.landing import VARIANTS, LandingSize, copy_days, ensure_landing, landed_bytes
from bench.measure import run_measured

DEFAULT_OUT = REPO_DIR / "bench" / "out"
FIRST_DAY = date(2025, 1, 1)  # inside the fx seed (2024-01-01 .. 2027-12-31)
RANGE_CONTENDERS = ("a", "b", "c", "d", "e")


@dataclass
class BenchConfig:
    days: int = 365
    payments: int = 10_000
    repeat: int = 3
    naive_days: int = 14
    scaling: list[int] = field(default_factory=lambda: [30, 90])
    rerun_landed: int = 7
    start: date = FIRST_DAY
    quick: bool = False
    variant: str = "standard"
    # the contenders to run; scaling and reruns (both of (a)) only when all of them run
    only: tuple[str, ...] = RANGE_CONTENDERS
    # a git revision whose row rules (macros/rules/) are measured beside this checkout's
    row_rule_baseline: str | None = None

    @property
    def end(self) -> date:
        return self.start + timedelta(days=self.days - 1)

    @property
    def scaling_sizes(self) -> list[int]:
        """The range lengths of the scaling runs, the full range (run as (a)) excluded."""
        return sorted({size for size in self.scaling if 0 < size < self.days})

    @property
    def everything(self) -> bool:
        return set(self.only) == set(RANGE_CONTENDERS)

    @property
    def rerun_day(self) -> date:
        """The day rerun with few and with all days landed: the newest of the few."""
        return self.start + timedelta(days=self.rerun_landed - 1)


def _progress(line: str) -> None:
    print(line, flush=True)  # one line per run, as it happens, also when piped to a file


QUICK = BenchConfig(
    days=5, payments=300, repeat=1, naive_days=1, scaling=[2], rerun_landed=2, quick=True
)


def run_bench(config: BenchConfig, out: Path, product_dir: Path, log=_progress) -> dict:
    """Measure every contender; return the results (also written under `out`)."""
    out.mkdir(parents=True, exist_ok=True)
    landing = out / f"landing-{config.variant}-{config.days}x{config.payments}"
    clock = time.monotonic()
    size = LandingSize(config.start, config.days, config.payments, variant=config.variant)
    if ensure_landing(landing, size):
        log(
            f"bench: landed {config.days} days × {config.payments} payments "
            f"({config.variant}) in {time.monotonic() - clock:.0f}s under {landing}"
        )
    parameters = {
        "variant": config.variant,
        "only": list(config.only),
        "days": config.days,
        "payments": config.payments,
        "start": config.start.isoformat(),
        "repeat": config.repeat,
        "naive_days": config.naive_days,
        "scaling": config.scaling_sizes + [config.days],
        "rerun_landed": [config.rerun_landed, config.days],
        "rerun_day": config.rerun_day.isoformat(),
        "quick": config.quick,
        "landed_mb": landed_bytes(landing) / 1e6,
        "row_rule_baseline": config.row_rule_baseline,
    }
    environment = describe_environment(product_dir)
    runs: list[Run] = []
    step = iter(range(1, 10_000))

    def record(run: Run) -> Run:
        runs.append(run)
        m = run.measurement
        log(
            f"bench [{next(step)}] {run.contender} {run.label}: {m.wall_seconds:.1f}s wall, "
            f"{m.cpu_seconds:.1f}s CPU, {m.peak_rss_bytes / report.MIB:.0f} MiB peak, "
            f"others {m.other_cores:.2f} cores"
        )
        return run

    server, startup = start_prefect_server(out)
    parameters["prefect_server_start_seconds"] = startup
    log(f"bench: Prefect server up in {startup:.1f}s at {server.api_url} (not in the figures)")
    bench = Workbench(out=out, product_dir=product_dir, prefect_api_url=server.api_url)
    reconciliation = None
    try:
        full_warehouse = plain_warehouse = None
        # Repetitions interleave the contenders, so a busy minute on a shared machine
        # does not fall on one contender only.
        for repetition in range(1, config.repeat + 1):
            name = f"run{repetition}"
            if "a" in config.only:
                run, full_warehouse = contenders.refill_backfill(
                    bench, "a-refill", landing, config.start, config.end, run_name=name
                )
                record(run)
            if "b" in config.only:
                record(contenders.microbatch(bench, landing, config.start, config.end, name))
            if "c" in config.only:
                record(contenders.floor(bench, landing, config.start, config.end, name))
            if "e" in config.only:
                run, plain_warehouse = contenders.plain_microbatch(
                    bench, landing, config.start, config.end, name
                )
                record(run)
            if "a" in config.only:
                # the same backfill as (a), typed from the shell with no server running
                record(command.cold_backfill(bench, landing, config.start, config.end, name))
            for run in measure_row_rule(bench, config, landing, name):
                record(run)
            for size in config.scaling_sizes if config.everything else ():
                end = config.start + timedelta(days=size - 1)
                run, _ = contenders.refill_backfill(
                    bench, f"a-refill-{size}d", landing, config.start, end, run_name=name
                )
                record(run)

        if "d" in config.only:
            for run in contenders.naive_loop(
                bench, landing, config.start, config.naive_days, "run1"
            ):
                record(run)

        if full_warehouse and plain_warehouse:
            # (e) against refill on the same landing (the last repetition of each)
            reconciliation = reconcile.summarise(
                reconcile.compare_days(full_warehouse, plain_warehouse, config.start, config.end)
            )
            log(
                f"bench: (e) against (a): {reconciliation['identical_days']} identical days, "
                f"{reconciliation['differing_days']} differ "
                f"({reconciliation['differing_clean_days']} with no quarantined line), "
                f"{reconciliation['lost_lines']} lines lost silently by (e)"
            )

        if config.everything:
            run_reruns(bench, config, out, landing, full_warehouse, record)
        if "a" in config.only:
            run_next_day(bench, config, out, landing, record)
    finally:
        server.stop()

    environment["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    environment["load_average_end"] = list(os.getloadavg())
    environment["total_seconds"] = round(time.monotonic() - clock, 1)
    return write_results(
        out, parameters, environment, [run.to_json() for run in runs], reconciliation
    )


def run_reruns(
    bench: Workbench, config: BenchConfig, out: Path, landing: Path, full_warehouse: Path, record
) -> None:
    """The same day rerun with few days landed and with the whole range landed (on a copy
    of the last full backfill's warehouse)."""
    large = bench.role_dir("rerun-large") / "warehouse"
    if large.exists():
        shutil.rmtree(large)
    large.mkdir(parents=True)
    shutil.copy2(full_warehouse, large / contenders.WAREHOUSE_NAME)
    small_landing = out / f"landing-{config.variant}-{config.rerun_landed}x{config.payments}"
    copy_days(landing, small_landing, config.start, config.rerun_landed)
    setup, small_warehouse = contenders.refill_backfill(
        bench, "rerun-small", small_landing, config.start, config.rerun_day, run_name="setup"
    )
    setup.contender = "setup"
    record(setup)
    for repetition in range(1, config.repeat + 1):
        for landed, landing_root, warehouse, role in (
            (config.rerun_landed, small_landing, small_warehouse, "rerun-small"),
            (config.days, landing, large / contenders.WAREHOUSE_NAME, "rerun-large"),
        ):
            run = contenders.refill_daily(
                bench, role, landing_root, warehouse, config.rerun_day, f"run{repetition}"
            )
            run.label = f"rerun {config.rerun_day}, {landed} days landed"
            run.details["landed_days"] = landed
            record(run)


def measure_row_rule(bench: Workbench, config: BenchConfig, landing: Path, name: str) -> list[Run]:
    """The staging statement over the range (this checkout's row rules, and the baseline's
    when asked) and one read_json of the same files, each a process on a fresh file."""
    variants = [("rule", row_rule.floor.RULES)]
    if config.row_rule_baseline:
        rules = bench.role_dir("rule-baseline") / "rules"
        variants.append(
            ("rule-baseline", row_rule.rules_at(REPO_DIR, config.row_rule_baseline, rules))
        )
    variants.append(("read_json", None))
    runs = []
    for role, rules in variants:
        database = bench.role_dir(role) / "lines.duckdb"
        arguments = ["--landing", str(landing), "--database", str(database)]
        arguments += ["--start", config.start.isoformat(), "--end", config.end.isoformat()]
        arguments += ["--rules", str(rules)] if rules else ["--read-json"]
        measurement = run_measured(
            [bench.python, "-m", "bench.row_rule", *arguments],
            cwd=REPO_DIR,
            env=bench.env(role, landing, database),
            log=bench.log(role, name),
            timeout_seconds=bench.timeout_seconds,
        )
        database.unlink(missing_ok=True)
        runs.append(Run(role, f"{role} over {config.days}d", config.days, measurement))
    return runs


def run_next_day(bench: Workbench, config: BenchConfig, out: Path, landing: Path, record) -> None:
    """The morning's run: the days before `rerun_day` published (a setup backfill), then
    `refill daily` of the day from the shell, cold and with a server, against a bare
    `dbt build --vars` of the same day; and once, where a cold command's time goes."""
    small_landing = out / f"landing-{config.variant}-{config.rerun_landed}x{config.payments}"
    if not small_landing.exists():
        copy_days(landing, small_landing, config.start, config.rerun_landed)
    day = config.rerun_day
    before = day - timedelta(days=1)
    setup, warehouse = contenders.refill_backfill(
        bench, "next-day-setup", small_landing, config.start, before, run_name="setup"
    )
    setup.contender = "setup"
    record(setup)
    for repetition in range(1, config.repeat + 1):
        for run in command.next_day_runs(bench, small_landing, warehouse, day, f"run{repetition}"):
            record(run)
    for run in command.phase_runs(
        bench, landing, warehouse, config.start, config.end, day, "phases"
    ):
        record(run)


def write_results(
    out: Path,
    parameters: dict,
    environment: dict,
    runs: list[dict],
    reconciliation: dict | None = None,
) -> dict:
    """Summarise the runs and write the JSON, the markdown table and the chart."""
    summary = report.summarise(
        runs,
        parameters["days"],
        parameters["naive_days"],
        parameters.get("variant", "standard"),
        reconciliation,
    )
    results = {
        "parameters": parameters,
        "environment": environment,
        "summary": summary,
        "runs": runs,
    }
    table = report.markdown(summary, parameters, environment)
    (out / "bench-results.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    (out / "bench-results.md").write_text(table)
    report.write_chart(summary, out / "bench-scaling.png")
    return results


def rerender(out: Path) -> dict:
    """Summarise the runs of an earlier bench-results.json again, without measuring."""
    results = json.loads((out / "bench-results.json").read_text())
    return write_results(
        out,
        results["parameters"],
        results["environment"],
        results["runs"],
        results["summary"].get("reconciliation"),
    )


def start_prefect_server(out: Path):
    """One Prefect server for every flow run of the bench, on its own database; returns it
    and its start-up seconds. Without it each `python -m refill` would start a temporary
    server of its own, a few seconds that are Prefect's, not refill's."""
    home = out / "prefect-home"
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    os.environ["PREFECT_HOME"] = str(home)  # before prefect is imported: its own database
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    from prefect.server.api.server import SubprocessASGIServer

    clock = time.monotonic()
    server = SubprocessASGIServer()
    server.start(timeout=180)
    return server, time.monotonic() - clock


def describe_environment(product_dir: Path) -> dict:
    def version(package: str) -> str:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return "not installed"

    return {
        "measured_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "memory_gib": psutil.virtual_memory().total / report.GIB,
        "load_average_start": list(os.getloadavg()),
        "product_dir": str(product_dir),
        "product_commit": _git_commit(product_dir),
        "packages": {
            name: version(name) for name in ("dbt-core", "dbt-duckdb", "duckdb", "prefect")
        },
    }


def _git_commit(folder: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=folder, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        head = git("rev-parse", "--short=12", "HEAD")
        dirty = git(
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            "refill",
            "flows",
            "models",
            "macros",
            "seeds",
            "dbt_project.yml",
            "profiles.yml",
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}+dirty" if dirty else head


def parse_args(argv: list[str] | None) -> tuple[BenchConfig, argparse.Namespace]:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--quick", action="store_true", help="tiny data, one run: checks it runs")
    parser.add_argument("--days", type=int, help="days in the range (365)")
    parser.add_argument("--payments", type=int, help="payments a day (10000)")
    parser.add_argument(
        "--repeat", type=int, help="runs of each contender; medians are reported (3)"
    )
    parser.add_argument("--naive-days", type=int, help="days of the naive loop, extrapolated (14)")
    parser.add_argument(
        "--scaling", help="range lengths for the per-day cost of (a), comma-separated (30,90)"
    )
    parser.add_argument("--rerun-landed", type=int, help="days landed for the small rerun (7)")
    parser.add_argument(
        "--variant",
        choices=VARIANTS,
        default="standard",
        help="the landing: the generator's data (standard) or 0.01%% malformed lines in a "
        "few part files (realistic)",
    )
    parser.add_argument(
        "--only",
        help="run only these contenders over the range, comma-separated (e.g. a,e); scaling "
        "and reruns run only when every contender does",
    )
    parser.add_argument(
        "--row-rule-baseline",
        metavar="REV",
        help="also measure the row rules (macros/rules/) as they were at this git revision",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="where results go (bench/out; bench/out/realistic for the realistic variant)",
    )
    parser.add_argument(
        "--product-dir",
        type=Path,
        default=REPO_DIR,
        help="the refill checkout to measure (this one); e.g. a worktree with a candidate fix",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="re-render the tables and chart from --out's bench-results.json, measure nothing",
    )
    parser.add_argument(
        "--publish",
        action="store_true",
        help="also copy the results to bench/results/ (JSON, the chart) and docs/performance.md",
    )
    args = parser.parse_args(argv)
    config = QUICK if args.quick else BenchConfig()
    overrides = {
        "days": args.days,
        "payments": args.payments,
        "repeat": args.repeat,
        "naive_days": args.naive_days,
        "rerun_landed": args.rerun_landed,
        "scaling": [int(part) for part in args.scaling.split(",")] if args.scaling else None,
        "variant": args.variant,
        "only": tuple(part.strip() for part in args.only.split(",")) if args.only else None,
        "row_rule_baseline": args.row_rule_baseline,
    }
    config = BenchConfig(
        **{**config.__dict__, **{k: v for k, v in overrides.items() if v is not None}}
    )
    if config.days < 2 or config.repeat < 1 or not 1 <= config.naive_days <= config.days:
        parser.error("need --days >= 2, --repeat >= 1 and 1 <= --naive-days <= --days")
    if not 1 <= config.rerun_landed < config.days:
        parser.error("need 1 <= --rerun-landed < --days")
    if not config.only or not set(config.only) <= set(RANGE_CONTENDERS):
        parser.error(f"--only takes contenders among {','.join(RANGE_CONTENDERS)}")
    if args.out is None:
        args.out = DEFAULT_OUT if config.variant == "standard" else DEFAULT_OUT / config.variant
    return config, args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--spark" in argv:  # imported only when asked: `make bench` needs no pyspark nor Java
        return __import__("bench.spark").spark.main([part for part in argv if part != "--spark"])
    config, args = parse_args(argv)
    out = args.out.resolve()
    product_dir = args.product_dir.resolve()
    if not args.report_only:
        print(
            f"bench: {config.days} days × {config.payments} payments ({config.variant}), "
            f"{config.repeat} run(s) each, contenders {','.join(config.only)}, naive loop "
            f"over {config.naive_days} days, refill from {product_dir}"
        )
    results = rerender(out) if args.report_only else run_bench(config, out, product_dir)
    table = (out / "bench-results.md").read_text()
    print(table)
    ratios, cpu_ratios = results["summary"]["ratios"], results["summary"]["cpu_ratios"]
    if "a/e" in ratios:
        print(
            f"bench: refill/(e) on the {results['summary']['variant']} data: "
            f"{ratios['a/e']:.2f} wall, {cpu_ratios['a/e']:.2f} CPU"
        )
    for name, value in {
        **results["summary"].get("command_ratios", {}),
        **results["summary"].get("row_rule_ratios", {}),
    }.items():
        print(f"bench: {name} {value['wall']:.2f} wall, {value['cpu']:.2f} CPU")
    print(f"bench: results in {out} ({results['environment']['total_seconds']:.0f}s)")
    if args.publish:
        report.publish(
            out, report.RESULTS_DIR, report.PERFORMANCE_PAGE, table, results["summary"]["variant"]
        )
        print(f"bench: published to {report.RESULTS_DIR} and {report.PERFORMANCE_PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
