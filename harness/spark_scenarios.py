"""The Spark subset's scenarios (harness/spark.py has the reader and the checker).

Each scenario lands four small days and runs `refill backfill` over them, newest-first in
two-day chunks, on `DBT_TARGET=spark-cluster` (the local cluster, emptied for it), as
processes of their own; after each event the warehouse is read and the Spark invariants
checked:

- failed_chunk_then_resume: while the first chunk builds, the export of the oldest day is
  withdrawn (its `_SUCCESS` taken away: real input, as an exporter can do), so the second
  chunk fails at readiness; then the export lands again and the same command runs again,
  and must build only that chunk.
- interrupted_then_killed_then_rerun: a Ctrl-C (SIGINT to the backfill's process group, as
  a terminal sends it) a few seconds into its first chunk: the chunk in flight finishes,
  no chunk starts after it, and the command exits 130 with its run logged `interrupted`;
  then the same command, which has only the other chunk left, is sent SIGKILL a few
  seconds into it (the cluster runs on: a statement in flight completes there, the next is
  never sent); then the same command once more.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from harness import spark
from harness.driver import Finding, Stats
from harness.invariants import CheckContext, Truths, WarehouseState
from refill.errors import EXIT_INTERRUPTED
from refill.rules.readiness import MANIFEST_NAME, day_folder
from refill.sample_data import DATASET, DaySpec, write_days
from refill.warehouse import partition_locks
from tools import spark_cluster

SEED = 0  # the subset's scenarios are fixed, not drawn: findings name the scenario instead
SIGNAL_AFTER_SECONDS = 5.0  # into a chunk's build
# After a Ctrl-C the chunk in flight finishes (a minute on a loaded 2-core cluster), so the
# wait is longer than the DuckDB harness's (invariants.INTERRUPT_GRACE_SECONDS).
INTERRUPT_GRACE_SECONDS = 300.0


def days() -> list[date]:
    return [spark.FIRST_DAY + timedelta(n) for n in range(spark.DAYS)]


def backfill_arguments() -> list[str]:
    return [
        "backfill",
        "--start",
        str(days()[0]),
        "--end",
        str(days()[-1]),
        "--chunk-days",
        str(spark.CHUNK_DAYS),
        "--order",
        "newest-first",
    ]


@dataclass
class Event:
    """One event of a scenario and what the checker found after it."""

    name: str
    code: int | None = None  # the command's exit status (None: a landing event)
    output: str = ""  # what the command printed (stdout and stderr)
    state: WarehouseState | None = None
    violations: list = field(default_factory=list)
    seconds: float = 0.0  # the command's wall time, from its start to its exit
    signal: str | None = None  # SIGINT or SIGKILL, sent while the command worked


@dataclass
class SparkScenario:
    """A scenario's folders and events."""

    name: str
    folder: Path
    cluster: spark_cluster.Cluster
    events: list[Event] = field(default_factory=list)
    started: float = 0.0  # when the running command started (time.monotonic)

    @property
    def landing(self) -> Path:
        return self.folder / "landing"

    @property
    def warehouse(self) -> Path:
        """refill's folder (its locks); the tables are the cluster's (`tables`)."""
        return self.folder / "warehouse"

    @property
    def tables(self) -> Path:
        return Path(self.cluster.state) / "warehouse"

    def environment(self) -> dict[str, str]:
        return {
            **os.environ,
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "DO_NOT_TRACK": "1",
            **self.cluster.environment(),
            "REFILL_LANDING": str(self.landing),
            "REFILL_SPARK_WAREHOUSE": str(self.warehouse),
        }

    def read_state(self) -> WarehouseState:
        return spark.read_spark_state(self.warehouse, self.tables)

    def start(self) -> subprocess.Popen:
        self.started = time.monotonic()
        return subprocess.Popen(
            [sys.executable, "-m", "refill", *backfill_arguments()],
            env=self.environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # a kill reaches the command and its workers, nothing else
        )

    def event(self, event: Event) -> Event:
        if event.code is not None:
            event.seconds = time.monotonic() - self.started
        self.events.append(event)
        return event


def _wait_until_held(scenario: SparkScenario, process: subprocess.Popen, wanted: list[date]):
    """Wait until a chunk over `wanted` holds its days' locks (it is building); False if
    the process ended first."""
    names = {str(day) for day in wanted}
    while process.poll() is None:
        locks = partition_locks.locks_dir(scenario.warehouse)
        if locks.is_dir() and names & set(partition_locks.holders(scenario.warehouse)):
            return True
        time.sleep(0.1)
    return False


def _check(scenario, event, truths, before, *, after_kill=False, **context) -> Event:
    try:
        with _cluster_environment(scenario):
            event.state = scenario.read_state()
    except Exception as error:  # noqa: BLE001 (a warehouse that does not read is the finding)
        event.violations.append(
            spark.Violation("warehouse_opens", f"{type(error).__name__}: {str(error)[:300]}")
        )
        event.state = before
        return event
    check_context = CheckContext(before=before, **context)
    event.violations += spark.check_spark(event.state, truths, check_context, after_kill=after_kill)
    return event


@contextlib.contextmanager
def _cluster_environment(scenario: SparkScenario):
    """This process pointed at the scenario's cluster while the checker reads it."""
    wanted = scenario.cluster.environment()
    before = {key: os.environ.get(key) for key in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _tell(say: Callable[[str], None], event: Event) -> None:
    found = len(event.violations)
    say(f"  {event.name}: exit {event.code} in {event.seconds:.0f}s, {found} violation(s)")


def _land(scenario: SparkScenario) -> Truths:
    write_days(
        scenario.landing, spark.FIRST_DAY, spark.DAYS, DaySpec(payments=spark.PAYMENTS_A_DAY)
    )
    truths = Truths(scenario.landing)
    for day in days():
        truths.record(day)
    scenario.event(Event("land 4 days"))
    return truths


def _run(scenario: SparkScenario, process: subprocess.Popen) -> tuple[int, str]:
    output, _ = process.communicate(timeout=spark.RUN_TIMEOUT_SECONDS)
    return process.returncode, output


def failed_chunk_then_resume(
    folder: Path, cluster: spark_cluster.Cluster, say: Callable[[str], None] = print
) -> SparkScenario:
    spark_cluster.reset(cluster)
    scenario = SparkScenario("failed_chunk_then_resume", folder, cluster)
    truths = _land(scenario)
    oldest_chunk, newest_chunk = days()[: spark.CHUNK_DAYS], days()[spark.CHUNK_DAYS :]
    manifest = day_folder(scenario.landing, DATASET, days()[0]) / MANIFEST_NAME
    withdrawn = folder / "withdrawn_SUCCESS"

    before = WarehouseState()
    process = scenario.start()
    if not _wait_until_held(scenario, process, newest_chunk):
        code, output = _run(scenario, process)
        raise RuntimeError(f"the first chunk never started building ({code}): {output[-2000:]}")
    shutil.move(manifest, withdrawn)  # the export of the oldest day is withdrawn meanwhile
    code, output = _run(scenario, process)
    failed = scenario.event(
        Event("backfill; day 1's export withdrawn during chunk 1", code, output)
    )
    _check(scenario, failed, truths, before, unchanged_days=oldest_chunk)
    _tell(say, failed)

    shutil.move(withdrawn, manifest)  # the same export lands again: the same fingerprint
    code, output = _run(scenario, scenario.start())
    resumed = scenario.event(Event("the same backfill again", code, output))
    _check(scenario, resumed, truths, failed.state, converge_days=days())
    _tell(say, resumed)
    return scenario


def _signal_in_chunk(
    scenario: SparkScenario, process: subprocess.Popen, chunk: list[date], signum: int
) -> bool:
    """Send `signum` to the command's process group a few seconds into its build of
    `chunk`; False if the command ended before that."""
    if not _wait_until_held(scenario, process, chunk):
        return False
    time.sleep(SIGNAL_AFTER_SECONDS)
    if process.poll() is not None:
        return False
    os.killpg(process.pid, signum)
    return True


def interrupted_then_killed_then_rerun(
    folder: Path, cluster: spark_cluster.Cluster, say: Callable[[str], None] = print
) -> SparkScenario:
    spark_cluster.reset(cluster)
    scenario = SparkScenario("interrupted_then_killed_then_rerun", folder, cluster)
    truths = _land(scenario)
    oldest_chunk, newest_chunk = days()[: spark.CHUNK_DAYS], days()[spark.CHUNK_DAYS :]

    # Ctrl-C during the first chunk (the newest days), not the run's last
    before = WarehouseState()
    process = scenario.start()
    interrupted = _signal_in_chunk(scenario, process, newest_chunk, signal.SIGINT)
    clock = time.monotonic()
    try:
        output, _ = process.communicate(timeout=INTERRUPT_GRACE_SECONDS)
        stopped_after: float | None = time.monotonic() - clock
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        stopped_after = None
    name = "backfill, Ctrl-C in chunk 1" if interrupted else "backfill (ended before the Ctrl-C)"
    first = scenario.event(
        Event(name, process.returncode, output, signal="SIGINT" if interrupted else None)
    )
    interrupt = ("SIGINT", stopped_after, process.returncode) if interrupted else None
    stopped_in_chunk = f"{newest_chunk[0]}..{newest_chunk[-1]}" if interrupted else None
    _check(scenario, first, truths, before, interrupt=interrupt, stopped_in_chunk=stopped_in_chunk)
    _tell(say, first)

    # SIGKILL during the chunk left (the oldest days)
    process = scenario.start()
    killed = set()
    if _signal_in_chunk(scenario, process, oldest_chunk, signal.SIGKILL):
        killed.add(process.pid)
    code, output = _run(scenario, process)
    name = "the same backfill, SIGKILL in chunk 2" if killed else "the same backfill (ended first)"
    second = scenario.event(Event(name, code, output, signal="SIGKILL" if killed else None))
    _check(scenario, second, truths, first.state, after_kill=bool(killed), killed_pids=killed)
    _tell(say, second)

    code, output = _run(scenario, scenario.start())
    rerun = scenario.event(Event("the same backfill again", code, output))
    _check(scenario, rerun, truths, second.state, converge_days=days(), killed_pids=killed)
    if code != 0:
        rerun.violations.append(
            spark.Violation("killed_run_converges", f"the rerun exited {code}: {output[-300:]}")
        )
    _tell(say, rerun)
    return scenario


SCENARIOS = {
    "failed_chunk_then_resume": failed_chunk_then_resume,
    "interrupted_then_killed_then_rerun": interrupted_then_killed_then_rerun,
}


def run_spark_subset(
    names: list[str] | None,
    workdir: Path,
    say: Callable[[str], None] = print,
    cluster: spark_cluster.Cluster | None = None,
) -> Stats:
    """Run the named scenarios (all by default) under `workdir` on `cluster` (emptied for
    each; without one, a cluster started under `workdir` and stopped after); the Stats,
    findings in it."""
    if cluster is None:
        state = workdir / "spark-cluster"
        say(f"harness (spark): starting a local Spark cluster in {state}")
        try:
            return run_spark_subset(names, workdir, say, spark_cluster.start(state))
        finally:
            spark_cluster.stop(state)
    stats = Stats()
    clock = time.monotonic()
    say(f"harness (spark): invariants checked: {', '.join(spark.SPARK_INVARIANTS)}")
    for invariant, why in spark.SKIPPED_ON_SPARK.items():
        say(f"harness (spark): skipped {invariant}: {why}")
    for name in names or list(SCENARIOS):
        say(f"scenario {name}:")
        scenario = SCENARIOS[name](workdir / name, cluster, say)
        stats.scenarios += 1
        for number, event in enumerate(scenario.events, 1):
            stats.events += 1
            if event.code is None:
                stats.landing_events += 1
                continue
            stats.subprocess_runs += 1
            stats.checks += 1
            stats.kills += event.signal is not None
            stats.outcomes[_outcome(event.code)] += 1
            for violation in event.violations:
                stats.findings.append(
                    Finding(
                        "violation",
                        violation.invariant,
                        violation.detail,
                        SEED,
                        number,
                        f"{name}: {event.name}",
                        None,
                    )
                )
    stats.seconds = time.monotonic() - clock
    return stats


def _outcome(code: int) -> str:
    return {0: "succeeded", -signal.SIGKILL: "killed", EXIT_INTERRUPTED: "interrupted"}.get(
        code, "failed"
    )


def summary(stats: Stats) -> list[str]:
    """The DuckDB harness's summary lines, counting the Spark subset's invariants."""
    outcomes = ", ".join(f"{name} {count}" for name, count in sorted(stats.outcomes.items()))
    lines = [
        "",
        "harness summary (spark subset):",
        f"  scenarios          {stats.scenarios}",
        f"  events             {stats.events} ({stats.landing_events} landing, "
        f"{stats.subprocess_runs} child-process runs)",
        f"  signals            {stats.kills} (SIGINT as a terminal's Ctrl-C, SIGKILL)",
        f"  invariant checks   {stats.checks * len(spark.SPARK_INVARIANTS)} ({stats.checks} "
        f"checker passes x {len(spark.SPARK_INVARIANTS)} invariants)",
        f"  violations         {len(stats.violations)}",
        f"  run outcomes       {outcomes}",
        f"  time               {stats.seconds:.0f}s",
    ]
    for finding in stats.violations:
        lines += finding.lines()[:2]
    return lines
