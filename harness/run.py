"""The harness's command: `python -m harness.run [--scenarios N --seed S] [--variant NAME]`.

With neither option, runs the CI budget: the seeds of harness/budget.py, the fewest events
that exercise every feature of a wider sweep's plans. With them, the sweep of scenarios S,
S+1, ..., S+N-1 (each a seed of its own: `--scenarios 1 --seed X` replays scenario X).
Prints a progress line per scenario and a summary: scenarios,
events, kills, invariant checks, violations, and for each violation the invariant, the
scenario's seed and the event that exposed it. Exits 1 when any invariant was violated.

`--jobs J` shares the seeds among J worker processes (each with its own warehouse
folders and children, all on one Prefect server): scenarios are independent, and one
refill run keeps about one core busy.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")

DEFAULT_SEED = 1000  # a sweep's first seed when --scenarios is given without --seed
PROJECT_DIR = Path(__file__).resolve().parent.parent
_COUNTS = (
    "scenarios",
    "events",
    "landing_events",
    "in_process_runs",
    "subprocess_runs",
    "kills",
    "kills_missed",
    "checks",
    "reader_polls",
)


@contextlib.contextmanager
def prefect_server() -> Iterator[str | None]:
    """This process's Prefect API: the one configured, or a temporary local server."""
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value():
        yield PREFECT_API_URL.value()
        return
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield PREFECT_API_URL.value()


def run_harness(
    seeds: list[int],
    variant: str | None = None,
    stop_on_violation: bool = False,
    workdir: Path | None = None,
    keep_folders: bool = False,
    say: Callable[[str], None] = print,
    verbose: bool = False,
    jobs: int = 1,
    classes: str | None = None,
):
    """Run the scenarios and return the Stats (findings included); `classes`: a name of
    harness.scenarios.CLASSES, to draw the scenarios' events from those kinds only."""
    from harness.driver import Stats
    from harness.variants import check_variant

    check_variant(variant)
    label = (variant or "real code") + (f", classes {classes}" if classes else "")
    numbers = _seed_ranges(seeds)
    say(f"harness: {len(seeds)} scenario(s), seeds {numbers}, on {label}, {jobs} job(s)")
    clock = time.monotonic()
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="harness-")))
        stack.enter_context(prefect_server())
        if jobs <= 1:
            stats = run_seeds(
                seeds, variant, stop_on_violation, workdir, keep_folders, say, verbose, "", classes
            )
        else:
            stats = _run_jobs(
                seeds,
                jobs,
                variant,
                stop_on_violation,
                workdir,
                keep_folders,
                say,
                verbose,
                classes,
            )
            stats.findings.sort(key=lambda f: (f.seed, f.event_number))
    stats = stats or Stats()
    stats.seconds = time.monotonic() - clock
    for line in summary(stats, variant):
        say(line)
    return stats


def _seed_ranges(seeds: list[int]) -> str:
    """1000-1003, 1007, 1010-1011: the seeds as a reader would list them."""
    ranges: list[list[int]] = []
    for seed in sorted(seeds):
        if ranges and seed == ranges[-1][-1] + 1:
            ranges[-1][-1] = seed
        else:
            ranges.append([seed, seed])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def run_seeds(
    seeds: list[int],
    variant: str | None,
    stop_on_violation: bool,
    workdir: Path,
    keep_folders: bool,
    say: Callable[[str], None],
    verbose: bool = False,
    prefix: str = "",
    classes: str | None = None,
):
    """Run the scenarios of `seeds` in this process (which has a Prefect API)."""
    from prefect.settings import PREFECT_API_URL

    from harness.driver import Driver, Stats
    from harness.overlay import use_patched_project
    from harness.scenarios import CLASSES, plan_scenario

    weights = CLASSES[classes] if classes else None
    stats = Stats()
    clock = time.monotonic()
    with use_patched_project(variant):
        api = PREFECT_API_URL.value()
        driver = Driver(workdir, variant, api, stats, keep_folders, stop_on_violation)
        try:
            for number, seed in enumerate(seeds, 1):
                scenario = plan_scenario(seed, weights)
                result = driver.run(scenario)
                violations = [f for f in result.findings if f.kind == "violation"]
                kinds = ", ".join(event.kind for event in scenario.events)
                say(
                    f"{prefix}[{number:>4}/{len(seeds)}] seed {seed}: {result.events} events "
                    f"({kinds}) {len(violations)} violation(s) {result.seconds:.1f}s "
                    f"| total {stats.events} events, {stats.kills} kills, "
                    f"{len(stats.violations)} violations, {time.monotonic() - clock:.0f}s"
                )
                if verbose:
                    timings = ", ".join(f"{k} {r:.1f}+{c:.2f}s" for k, r, c in result.timings)
                    say(f"{prefix}        {timings}")
                for finding in result.findings:
                    for line in finding.lines():
                        say(prefix + line)
                if stop_on_violation and violations:
                    break
        finally:
            driver.close()
    return stats


def _run_jobs(
    seeds, jobs, variant, stop_on_violation, workdir, keep_folders, say, verbose, classes=None
):
    """Share the seeds among worker processes (every J-th seed each) and merge their stats."""
    from prefect.settings import PREFECT_API_URL

    from harness.driver import Finding, Stats

    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PYTHONUNBUFFERED": "1"}
    env.setdefault("PREFECT_LOGGING_LEVEL", "CRITICAL")
    workers = []
    for job in range(jobs):
        share = seeds[job::jobs]
        if not share:
            continue
        result = workdir / f"job-{job}.json"
        command = [sys.executable, "-m", "harness.run", "--worker-result", str(result)]
        command += ["--seeds", ",".join(map(str, share)), "--workdir", str(workdir / f"job-{job}")]
        command += ["--variant", variant] if variant else []
        command += ["--stop-on-violation"] if stop_on_violation else []
        command += ["--keep"] if keep_folders else []
        command += ["--verbose"] if verbose else []
        command += ["--classes", classes] if classes else []
        process = subprocess.Popen(
            command,
            cwd=PROJECT_DIR,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        workers.append((job, process, result))

    violated = threading.Event()

    def relay(job: int, process: subprocess.Popen) -> None:
        for line in process.stdout:
            say(f"job {job} {line.rstrip()}")
            if line.startswith("VIOLATION"):
                violated.set()

    readers = [threading.Thread(target=relay, args=(j, p), daemon=True) for j, p, _ in workers]
    for reader in readers:
        reader.start()
    while any(process.poll() is None for _, process, _ in workers):
        if stop_on_violation and violated.is_set():
            time.sleep(5)  # let the violating worker write its result
            for _, process, _ in workers:
                if process.poll() is None:
                    process.terminate()
        time.sleep(0.2)
    for reader in readers:
        reader.join(timeout=10)

    stats = Stats()
    for job, process, result in workers:
        if not result.exists():
            if not (stop_on_violation and violated.is_set()):
                say(f"job {job} ended ({process.returncode}) without a result")
            continue
        data = json.loads(result.read_text())
        for name in _COUNTS:
            setattr(stats, name, getattr(stats, name) + data[name])
        stats.outcomes += Counter(data["outcomes"])
        stats.findings += [Finding(**finding) for finding in data["findings"]]
    return stats


def summary(stats, variant: str | None) -> list[str]:
    outcomes = ", ".join(f"{name} {count}" for name, count in sorted(stats.outcomes.items()))
    lines = [
        "",
        f"harness summary ({variant or 'real code'}):",
        f"  scenarios          {stats.scenarios}",
        f"  events             {stats.events} ({stats.landing_events} landing, "
        f"{stats.in_process_runs} in-process runs, {stats.subprocess_runs} child-process runs)",
        f"  signals            {stats.kills} (SIGKILL, SIGINT or SIGTERM to a running "
        f"command; {stats.kills_missed} finished before the moment)",
        f"  invariant checks   {stats.invariant_checks} ({stats.checks} checker passes, "
        f"{stats.reader_polls} concurrent reads)",
        f"  violations         {len(stats.violations)}",
        f"  liveness findings  {len(stats.liveness)}",
        f"  run outcomes       {outcomes}",
        f"  time               {stats.seconds:.0f}s",
    ]
    seen = set()
    for finding in stats.violations:
        key = (finding.invariant, finding.seed)
        if key in seen:
            continue
        seen.add(key)
        lines.append(
            f"  caught: {finding.invariant} at seed {finding.seed}, event {finding.event_number} "
            f"({finding.event})"
        )
    return lines


def run_spark(workdir: Path | None, keep_folders: bool) -> int:
    """The Spark subset (harness/spark_scenarios.py): each scenario's `refill` runs are
    processes of their own, on a Prefect server each starts, as a user's would."""
    from harness.spark_scenarios import run_spark_subset, summary

    with contextlib.ExitStack() as stack:
        if workdir is None and not keep_folders:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="harness-")))
        elif workdir is None:
            workdir = Path(tempfile.mkdtemp(prefix="harness-"))
        workdir.mkdir(parents=True, exist_ok=True)
        stats = run_spark_subset(None, workdir, say=lambda line: print(line, flush=True))
    for line in summary(stats):
        print(line, flush=True)
    return 1 if stats.violations else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.run", description="refill's fault-injection harness."
    )
    parser.add_argument(
        "--scenarios", type=int, help="a sweep of N seeds (default: the CI budget's cover)"
    )
    parser.add_argument("--seed", type=int, help=f"the sweep's first seed (default {DEFAULT_SEED})")
    parser.add_argument("--variant", help="a deliberately broken variant: append, clock_date, ...")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--stop-on-violation",
        action="store_true",
        help="stop at the first violation (the rest of its scenario is not run)",
    )
    parser.add_argument("--workdir", type=Path, help="where scenarios write (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep every scenario's folder")
    parser.add_argument("--describe", action="store_true", help="print the plans, run nothing")
    parser.add_argument("--verbose", action="store_true", help="time every event")
    parser.add_argument(
        "--classes",
        choices=("preview",),
        help="draw the events from one class of scenarios only (harness.scenarios.CLASSES)",
    )
    parser.add_argument(
        "--engine",
        choices=("duckdb", "spark"),
        default="duckdb",
        help="spark: the Spark subset (harness/spark.py), its fixed scenarios, no --variant",
    )
    # A worker of --jobs: the seeds it runs and where it writes its stats.
    parser.add_argument("--seeds", help=argparse.SUPPRESS)
    parser.add_argument("--worker-result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if (args.scenarios is not None and args.scenarios < 1) or args.jobs < 1:
        parser.error("--scenarios and --jobs must be >= 1")
    if args.engine == "spark":
        if args.variant:
            parser.error("--variant: the broken variants are DuckDB overlays, not run on Spark")
        return run_spark(args.workdir, args.keep)
    if args.seeds:  # a worker of --jobs: its share
        seeds = [int(seed) for seed in args.seeds.split(",")]
    elif args.scenarios is None and args.seed is None:
        from harness.budget import ci_seeds

        seeds = ci_seeds(args.classes)
    else:
        first = DEFAULT_SEED if args.seed is None else args.seed
        seeds = [first + number for number in range(args.scenarios or 1)]
    if args.describe:
        from harness.scenarios import CLASSES, plan_scenario

        weights = CLASSES[args.classes] if args.classes else None
        for seed in seeds:
            print("\n".join(plan_scenario(seed, weights).describe()))
        return 0
    # Expected failures are the point here: keep refill's run logs off the console.
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "CRITICAL")
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)

    def say(line: str) -> None:
        print(line, flush=True)

    if args.worker_result:
        with prefect_server():
            stats = run_seeds(
                seeds,
                args.variant,
                args.stop_on_violation,
                args.workdir,
                args.keep,
                say,
                args.verbose,
                "",
                args.classes,
            )
        data = {
            **{name: getattr(stats, name) for name in _COUNTS},
            "outcomes": dict(stats.outcomes),
            "findings": [dataclasses.asdict(finding) for finding in stats.findings],
        }
        args.worker_result.write_text(json.dumps(data))
        return 1 if stats.violations else 0

    stats = run_harness(
        seeds,
        args.variant,
        args.stop_on_violation,
        args.workdir,
        args.keep,
        say=say,
        verbose=args.verbose,
        jobs=args.jobs,
        classes=args.classes,
    )
    return 1 if stats.violations else 0


if __name__ == "__main__":
    sys.exit(main())
