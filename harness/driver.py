"""Runs a scenario's events against the real command line and checks after every event.

Most runs are in-process (`refill.cli.main(argv)`: the real command line, on this
process's parsed dbt project), with a concurrent reader polling the warehouse from its
own connection. Kills and concurrent runs need another process: a child
(harness/child.py) started from a warm pool, pointed at this process's Prefect server.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import http.server
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path

from flows import backfill as backfill_module
from harness import invariants, overlay
from harness.hostile import write_hostile_day
from harness.invariants import CheckContext, ConcurrentReader, Truths, WarehouseState
from harness.scenarios import PREVIEW_PLACEHOLDER, Event, Scenario, SeedChange
from refill import cli, settings
from refill.rules import readiness
from refill.rules.readiness import day_folder
from refill.sample_data import DATASET, write_day
from refill.warehouse import locking, ops
from refill.warehouse.duckdb_engine import DuckDBWarehouse
from tests.helpers import (
    DBT_SEED_CHECKSUM_LIMIT,
    FX_SEED,
    fx_rates_of,
    grow_seed_past,
    set_fx_rate,
)

HARNESS_CHECKOUT = Path(__file__).resolve().parent.parent
CHILD_START_SECONDS = 180
KILL_WATCH_SECONDS = 180
CONCURRENT_WAIT_SECONDS = 600
# After SIGINT or SIGTERM a run stops at its next safe point: the chunk in flight ends
# (rolled back or committed) and nothing more starts. Longer than one chunk's build.
INTERRUPT_GRACE_SECONDS = 90
INTERRUPTED_EXIT = 130
NO_PREVIEW = "p000000000000"  # a publish before any preview was recorded names none


class HarnessFault(RuntimeError):
    """The failure the harness injects between a backfill's chunks."""


@dataclass
class Finding:
    """A violation (an invariant broken) or a liveness finding (a run that should have
    succeeded and did not), with what reproduces it."""

    kind: str  # violation | liveness
    invariant: str
    detail: str
    seed: int
    event_number: int
    event: str
    variant: str | None

    def lines(self) -> list[str]:
        reproduce = f"python -m harness.run --scenarios 1 --seed {self.seed}"
        if self.variant:
            reproduce += f" --variant {self.variant}"
        return [
            f"{self.kind.upper()} {self.invariant} (seed {self.seed}, event {self.event_number}: "
            f"{self.event})",
            f"    {self.detail}",
            f"    reproduce: {reproduce}",
        ]


@dataclass
class Stats:
    scenarios: int = 0
    events: int = 0
    landing_events: int = 0
    in_process_runs: int = 0
    subprocess_runs: int = 0
    kills: int = 0
    kills_missed: int = 0  # the child finished before the chosen moment
    checks: int = 0  # checker passes (each evaluates every invariant)
    reader_polls: int = 0
    seconds: float = 0.0
    outcomes: Counter = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)

    @property
    def invariant_checks(self) -> int:
        return self.checks * len(invariants.INVARIANTS)

    @property
    def violations(self) -> list[Finding]:
        return [f for f in self.findings if f.kind == "violation"]

    @property
    def liveness(self) -> list[Finding]:
        return [f for f in self.findings if f.kind == "liveness"]


@dataclass
class RunOutcome:
    code: int
    message: str  # the last line refill printed (its one-line error, or its report)
    output: str = ""

    @property
    def outcome(self) -> str:
        if self.code == 0:
            return "succeeded"
        if self.code == -signal.SIGKILL:
            return "killed"
        if self.code == INTERRUPTED_EXIT:
            return "interrupted"
        text = self.message
        for pattern, name in (
            ("harness: the backfill process fails between chunks", "fault between chunks"),
            ("refill fault injected", "fault"),
            ("is held by", "lock timeout"),
            (r"payments not ready", "not ready"),
            (r"failed [1-9]", "failed"),
            (r"not ready [1-9]", "not ready"),
            ("--yes", "refused"),
        ):
            if re.search(pattern, text):
                return name
        return "failed"


# -- the webhook sink ----------------------------------------------------------------------


class Webhook:
    """A local notification receiver: counts each idempotency key per scenario."""

    def __init__(self):
        self.received: dict[str, Counter] = defaultdict(Counter)
        received = self.received

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received[self.path.rsplit("/", 1)[-1]][self.headers["Idempotency-Key"]] += 1
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, scenario: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hook/{scenario}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- child processes -----------------------------------------------------------------------


class Child:
    def __init__(self, process: subprocess.Popen, ready_file: Path, log: Path):
        self.process = process
        self.ready_file = ready_file
        self.log = log

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_ready(self) -> None:
        deadline = time.monotonic() + CHILD_START_SECONDS
        while not self.ready_file.exists():
            if self.process.poll() is not None:
                raise RuntimeError(f"harness child died starting: {self.tail()}")
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("harness child did not start in time")
            time.sleep(0.05)

    def start(self, argv: list[str], env: dict) -> None:
        job = {"argv": runnable(argv), "env": env}
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def interrupt(self, signal_number: int) -> float | None:
        """Send SIGINT or SIGTERM; the seconds the child took to exit, None if it did not
        within the grace (it is then SIGKILLed)."""
        started = time.monotonic()
        if self.process.poll() is None:
            os.kill(self.process.pid, signal_number)
        try:
            self.process.wait(timeout=INTERRUPT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        return time.monotonic() - started

    def retire(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def outcome(self) -> RunOutcome:
        output = self.tail(4000)
        lines = [line for line in output.splitlines() if line.startswith("refill")]
        return RunOutcome(self.process.returncode, lines[-1] if lines else "", output)

    def tail(self, size: int = 1500) -> str:
        try:
            return self.log.read_text(errors="replace")[-size:]
        except FileNotFoundError:
            return ""


class ChildPool:
    """Keeps one child warm (Python started, refill imported, dbt parsed) for the next job."""

    def __init__(self, workdir: Path, prefect_api_url: str | None, project_dir: Path):
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1", "PREFECT_LOGGING_LEVEL": "WARNING"}
        self.env.pop(overlay.FAULT_ENV, None)
        # The child's refill builds the harness's patched copy of the project.
        self.env[settings.PROJECT_DIR_ENV] = str(project_dir)
        if prefect_api_url:
            self.env["PREFECT_API_URL"] = prefect_api_url
        # Parsing needs a warehouse path; the job's own paths replace these.
        self.env["REFILL_LANDING"] = str(workdir / "landing")
        self.env["REFILL_WAREHOUSE"] = str(workdir / "idle" / "refill.duckdb")
        self.count = 0
        self.spare: Child | None = None
        self.spare_time_zone: str | None = None

    def _spawn(self, time_zone: str | None) -> Child:
        self.count += 1
        ready = self.workdir / f"child-{self.count}.ready"
        log = self.workdir / f"child-{self.count}.log"
        env = dict(self.env)
        if time_zone:
            env["TZ"] = time_zone  # the host's zone, read by the process (and DuckDB) at start
        with log.open("w") as handle:
            process = subprocess.Popen(
                [sys.executable, "-m", "harness.child", "--ready-file", str(ready)],
                stdin=subprocess.PIPE,
                stdout=handle,
                stderr=subprocess.STDOUT,
                cwd=HARNESS_CHECKOUT,  # where `harness` imports from; dbt gets the copy
                env=env,
                text=True,
                start_new_session=True,  # a signal reaches only the child it is sent to
            )
        return Child(process, ready, log)

    def warm_up(self, time_zone: str | None = None) -> None:
        if self.spare is not None and self.spare_time_zone != time_zone:
            self.spare.retire()
            self.spare = None
        if self.spare is None:
            self.spare = self._spawn(time_zone)
            self.spare_time_zone = time_zone

    def take(self, time_zone: str | None = None) -> Child:
        self.warm_up(time_zone)
        child, self.spare = self.spare, None
        child.wait_ready()
        return child

    def close(self) -> None:
        if self.spare is not None:
            self.spare.retire()
            self.spare = None


# -- in-process runs -----------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _daily_takes_yes() -> bool:
    # parsed, not looked up in the parser: a command's options are added when the command
    # is parsed (refill.cli), so the built parser's `daily` holds none yet
    parsed, _ = cli.build_parser().parse_known_args(["daily", "--yes"])
    return getattr(parsed, "yes", None) is True


def runnable(argv: list[str]) -> list[str]:
    """The command as this refill takes it: a refill whose `daily` has no sign-off option
    (before `daily --yes`) restates without one, so the option is left out there."""
    if argv[:1] == ["daily"] and "--yes" in argv and not _daily_takes_yes():
        return [arg for arg in argv if arg != "--yes"]
    return list(argv)


def call_cli(argv: list[str]) -> RunOutcome:
    """`refill <argv>` in this process; its exit status and last line."""
    argv = runnable(argv)
    out, err = io.StringIO(), io.StringIO()
    saved_argv = sys.argv
    sys.argv = ["refill", *argv]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
            except Exception:  # a crash of refill is a finding, not the harness's crash
                code = 99
                print(f"refill crashed: {traceback.format_exc()}", file=sys.stderr)
    finally:
        sys.argv = saved_argv
    output = out.getvalue() + err.getvalue()
    refill_lines = [line for line in err.getvalue().splitlines() if line.startswith("refill")]
    refill_lines = refill_lines or [
        line for line in output.splitlines() if line.startswith("refill")
    ]
    return RunOutcome(code or 0, refill_lines[-1] if refill_lines else "", output)


@contextlib.contextmanager
def _environment(values: dict[str, str | None]):
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _reader_aware_connections(reader: ConcurrentReader | None):
    """The flows' read-only connections pause the reader (one configuration per file in a
    process); their read-write ones share the reader's database, as dbt's do."""
    if reader is None:
        yield
        return
    original = ops.connect

    @contextlib.contextmanager
    def connect(warehouse, read_only=False, wait_seconds=60):
        if not read_only:
            with original(warehouse, read_only, wait_seconds) as connection:
                yield connection
            return
        with reader.paused(), original(warehouse, read_only, wait_seconds) as connection:
            yield connection

    ops.connect = connect
    try:
        yield
    finally:
        ops.connect = original


@contextlib.contextmanager
def _failing_between_chunks(enabled: bool):
    """The backfill's process fails once its first chunk is committed, before the next."""
    if not enabled:
        yield
        return
    original = backfill_module._progress

    def progress_then_fail(*args, **kwargs):
        original(*args, **kwargs)
        raise HarnessFault("harness: the backfill process fails between chunks")

    backfill_module._progress = progress_then_fail
    try:
        yield
    finally:
        backfill_module._progress = original


# -- expectations --------------------------------------------------------------------------


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def expected_to_succeed(argv: list[str], landing: Path, before: WarehouseState) -> bool:
    """Whether refill should succeed: every day it needs is ready and no sign-off is missing.

    A failure where this says yes is a liveness finding. (A run that needs sign-off it
    was not given, or a day that has not landed, should fail, loudly.)
    """
    if argv[0] == "daily":
        day = date.fromisoformat(_option(argv, "--date"))
        verdict = readiness.day_readiness(landing, DATASET, day)
        # A manual daily of a published day restates it: it needs sign-off, as a backfill.
        published = before.published()
        restates = any((model, day) in published for model in invariants.CHECKED_MODELS)
        return verdict.is_ready and ("--yes" in argv or not restates)
    start = date.fromisoformat(_option(argv, "--start"))
    end = date.fromisoformat(_option(argv, "--end"))
    verdicts = readiness.window_readiness(landing, DATASET, start, end)
    if _option(argv, "--on-missing") != "skip" and not all(v.is_ready for v in verdicts):
        return False
    if "--yes" in argv:
        return True
    published = before.published()
    for verdict in verdicts:
        if not verdict.is_ready:
            continue
        for model in invariants.CHECKED_MODELS:
            entry = published.get((model, verdict.day))
            if entry and (entry[1] != verdict.source_fingerprint or "--restate" in argv):
                return False
    return True


# -- scenarios -----------------------------------------------------------------------------


@dataclass
class ScenarioResult:
    seed: int
    events: int
    seconds: float
    findings: list[Finding]
    folder: Path | None
    timings: list[tuple[str, float, float]] = field(default_factory=list)


class Driver:
    """Runs scenarios for one harness invocation: a variant (or the real code), each on
    the harness's patched copy of the project, a Prefect server, a webhook and a pool of
    warm children."""

    def __init__(
        self,
        root: Path,
        variant: str | None = None,
        prefect_api_url: str | None = None,
        stats: Stats | None = None,
        keep_folders: bool = False,
        stop_at_violation: bool = False,
    ):
        self.root = root
        self.variant = variant
        self.stats = stats or Stats()
        self.keep_folders = keep_folders
        # --stop-on-violation: a scenario ends at the event after which one was found
        self.stop_at_violation = stop_at_violation
        self.webhook = Webhook()
        project = overlay.patched_project(variant)
        self.pool = ChildPool(root / "children", prefect_api_url, project)
        self.seed = FxSeed(project / FX_SEED)

    def close(self) -> None:
        self.pool.close()
        self.webhook.close()

    def run(self, scenario: Scenario) -> ScenarioResult:
        clock = time.monotonic()
        folder = self.root / f"scenario-{scenario.seed}"
        if folder.exists():
            shutil.rmtree(folder)
        landing, warehouse = folder / "landing", folder / "warehouse" / "refill.duckdb"
        landing.mkdir(parents=True)
        self.seed.restore()  # a scenario starts from the project's own seed
        run = _ScenarioRun(self, scenario, landing, warehouse)
        with _environment(
            {
                "REFILL_LANDING": str(landing),
                "REFILL_WAREHOUSE": str(warehouse),
                "REFILL_WEBHOOK_URL": self.webhook.url(str(scenario.seed)),
                overlay.FAULT_ENV: None,
            }
        ):
            run.execute()
        self.stats.scenarios += 1
        findings = run.findings
        self.stats.findings += findings
        keep = self.keep_folders or any(f.kind == "violation" for f in findings)
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
        return ScenarioResult(
            scenario.seed,
            len(scenario.events),
            time.monotonic() - clock,
            findings,
            folder if keep else None,
            run.timings,
        )


def _child_event(event: Event) -> bool:
    return bool(event.kill_moment or event.second_argv or event.time_zone)


class _ScenarioRun:
    def __init__(self, driver: Driver, scenario: Scenario, landing: Path, warehouse: Path):
        self.driver = driver
        self.stats = driver.stats
        self.scenario = scenario
        self.landing = landing
        self.warehouse = warehouse
        self.truths = Truths(landing)
        self.findings: list[Finding] = []
        self.allowed_redeliveries: set[str] = set()
        self.killed_pids: set[int] = set()
        self.state = WarehouseState()
        self.pending: list[tuple[str, str]] = []  # liveness findings of the current event
        self.timings: list[tuple[str, float, float]] = []  # kind, run seconds, check seconds
        self.reported: set[tuple[str, str]] = set()
        self.preview_id = NO_PREVIEW  # the newest preview the scenario recorded

    def execute(self) -> None:
        for landing in self.scenario.initial:
            self._land(landing)
        events = self.scenario.events
        for number, event in enumerate(events, 1):
            later = [e for e in events[number - 1 :] if _child_event(e)]
            if later:
                self.driver.pool.warm_up(later[0].time_zone)  # starts while events run
            self._step(number, event)
            if self.driver.stop_at_violation and self._violated():
                return
        if self.scenario.final:
            final = Event("final", list(self.scenario.final), days=list(self.scenario.days))
            self._step(len(events) + 1, final)
            self._check_chunking_invariance(len(events) + 2)

    def _violated(self) -> bool:
        return any(finding.kind == "violation" for finding in self.findings)

    def _step(self, number: int, event: Event) -> None:
        before = self.state
        context = CheckContext(before=before)
        self.stats.events += 1
        self.pending = []
        started = time.monotonic()
        if PREVIEW_PLACEHOLDER in event.argv:
            event = dataclasses.replace(
                event, argv=[self.preview_id if a == PREVIEW_PLACEHOLDER else a for a in event.argv]
            )
            kept = invariants.read_kept_preview(self.warehouse, self.preview_id)
            context.publishing_preview = kept
        try:
            self._run_event(event, context)
        except Exception:  # the harness itself failed: say so, keep going
            self._finding("liveness", "harness_error", traceback.format_exc(), number, event)
        ran = time.monotonic() - started
        try:
            self.state = invariants.read_state(self.warehouse)
        except Exception as error:  # noqa: BLE001 (any failure to open is the finding)
            detail = f"{type(error).__name__}: {' '.join(str(error).split())[:300]}"
            self._finding("violation", "warehouse_opens", detail, number, event)
            self.state = before
        context.current_versions = _current_versions()
        context.reference_now = _reference_now()
        context.rates = self.driver.seed.rates()
        self.preview_id = self.state.newest_preview or self.preview_id
        context.runs_finished = not event.kill_moment or context.interrupt is not None
        context.deliveries = dict(self.driver.webhook.received.get(str(self.scenario.seed), {}))
        context.allowed_redeliveries = set(self.allowed_redeliveries)
        context.killed_pids = set(self.killed_pids)
        for violation in invariants.check(self.state, self.truths, context):
            self._violation(violation, number, event)
        self.stats.checks += 1
        self.timings.append((event.kind, ran, time.monotonic() - started - ran))
        for invariant, detail in self.pending:
            self._finding("liveness", invariant, detail, number, event)

    def _violation(self, violation: invariants.Violation, number: int, event: Event) -> None:
        if (violation.invariant, violation.detail) not in self.reported:
            self.reported.add((violation.invariant, violation.detail))  # first sighting
            self._finding("violation", violation.invariant, violation.detail, number, event)

    def _finding(self, kind: str, invariant: str, detail: str, number: int, event: Event):
        self.findings.append(
            Finding(
                kind,
                invariant,
                detail,
                self.scenario.seed,
                number,
                event.describe(),
                self.driver.variant,
            )
        )

    def _land(self, landing) -> None:
        if landing.spec is None:
            shutil.rmtree(day_folder(self.landing, DATASET, landing.day), ignore_errors=True)
        elif landing.hostile is not None:
            write_hostile_day(
                self.landing, landing.day, landing.spec, landing.hostile, self.scenario.seed
            )
        else:
            write_day(self.landing, landing.day, landing.spec, seed=self.scenario.seed)
        self.truths.record(landing.day)

    def _expect(self, outcome: RunOutcome, expected: bool) -> None:
        self.stats.outcomes[outcome.outcome] += 1
        if expected and outcome.code != 0:
            said = outcome.message or outcome.output[-600:]
            self.pending.append(("run_should_succeed", f"{outcome.outcome}: {said}"))

    def _run_event(self, event: Event, context: CheckContext) -> None:
        if event.seed is not None:
            self.stats.landing_events += 1
            self.driver.seed.correct(event.seed)
            return
        for landing in event.before:
            self._land(landing)
        if event.landing is not None:
            self.stats.landing_events += 1
            self._land(event.landing)
        if event.dbt_argv:
            self._plain_dbt(event, context)
            return
        if not event.argv:
            return
        if event.kill_moment:
            self._run_killed(event, context)
            return
        if event.second_argv:
            self._run_concurrent(event, context)
            return
        if event.time_zone:
            self._run_in_child(event, context)
            return
        expected = (
            not event.fault_persists
            and event.kind not in ("between_chunks", "from_preview")
            and expected_to_succeed(event.argv, self.landing, context.before)
        )
        outcome = self._in_process(event, context)
        self._expect(outcome, expected)
        if event.fault_persists and outcome.outcome == "fault" and _nothing_published(outcome):
            context.unchanged_days = list(event.days)
        if event.kind == "resume":
            context.converge_days = [
                day for day in event.days if self.truths.current_fingerprint(day) is not None
            ]

    @contextlib.contextmanager
    def _watched(self, context: CheckContext):
        """The concurrent reader polls while the block runs in this process."""
        reader = ConcurrentReader(self.warehouse, known_days=set(context.before.facts))
        reader.start()
        try:
            with _reader_aware_connections(reader):
                yield
        finally:
            context.observations = reader.stop()
            context.torn_reads = reader.torn
            self.stats.reader_polls += reader.polls

    def _in_process(self, event: Event, context: CheckContext) -> RunOutcome:
        self.stats.in_process_runs += 1
        with (
            self._watched(context),
            _environment({overlay.FAULT_ENV: event.fault}),
            _failing_between_chunks(event.kind == "between_chunks"),
            self._landing_while_waiting(event.landing_while_waiting),
        ):
            outcome = call_cli(event.argv)
        if context.publishing_preview is not None:
            context.publishing_preview.code = outcome.code
        return outcome

    @contextlib.contextmanager
    def _landing_while_waiting(self, landing):
        """The day lands (re-exported) once the run asks for the warehouse to write, as it
        waits for it: after whatever the run checked before."""
        if landing is None:
            yield
            return
        take_the_lock = DuckDBWarehouse.lock
        pending = [landing]

        def land_then_take(warehouse, **kwargs):
            if pending and kwargs.get("priority") != locking.READ:
                self._land(pending.pop())
            return take_the_lock(warehouse, **kwargs)

        DuckDBWarehouse.lock = land_then_take
        try:
            yield
        finally:
            DuckDBWarehouse.lock = take_the_lock
            if pending:  # the run never asked for the warehouse: the day lands now
                self._land(pending.pop())

    def _plain_dbt(self, event: Event, context: CheckContext) -> None:
        """A dbt command as a user runs it, on the same project: it must refuse (nothing
        changes) or build correctly; the invariants say which."""
        self.stats.in_process_runs += 1
        if event.kind == "retention":
            context.retained_days = sorted(
                day
                for day in set(context.before.facts)
                | {e.partition_date for e in context.before.ledger}
                if not day_folder(self.landing, DATASET, day).is_dir()
            )
        with self._watched(context):
            outcome = call_dbt(event.dbt_argv)
        self.stats.outcomes[f"plain dbt {'ok' if outcome.code == 0 else 'refused'}"] += 1
        context.plain_dbt_message = outcome.message

    def _child_env(self, event: Event) -> dict:
        env = {
            "REFILL_LANDING": str(self.landing),
            "REFILL_WAREHOUSE": str(self.warehouse),
            "REFILL_WEBHOOK_URL": self.driver.webhook.url(str(self.scenario.seed)),
        }
        env.update(overlay.fault_environment(event.fault))
        return env

    def _run_killed(self, event: Event, context: CheckContext) -> None:
        self.stats.subprocess_runs += 1
        child = self.driver.pool.take()
        child.start(event.argv, self._child_env(event))
        moment = _wait_for_moment(child, self.warehouse, event.kill_moment, event.kill_delay)
        if moment is None:
            self.stats.kills_missed += 1
            expected = expected_to_succeed(event.argv, self.landing, context.before)
            self._expect(child.outcome(), expected)
            if context.publishing_preview is not None:
                context.publishing_preview.code = child.process.returncode
            return
        self.stats.kills += 1
        if event.kill_signal != "SIGKILL":
            seconds = child.interrupt(getattr(signal, event.kill_signal))
            context.interrupt = (event.kill_signal, seconds, child.process.returncode)
            # a chunk that is not the run's last (one-day chunks, oldest first): the stop
            # must come before the chunks after it
            if event.stops_between_chunks and moment and str(max(event.days)) not in moment:
                context.stopped_in_chunk = ", ".join(moment)
            self.stats.outcomes[child.outcome().outcome if seconds is not None else "hung"] += 1
            if seconds is not None:
                return
        else:
            child.kill()
            self.stats.outcomes["killed"] += 1
        self.killed_pids.add(child.pid)
        # A kill between the webhook's answer and the outbox's "sent" may deliver again.
        after = invariants.read_state(self.warehouse)
        received = self.driver.webhook.received.get(str(self.scenario.seed), {})
        self.allowed_redeliveries |= {key for key in after.unsent_keys if key in received}

    def _run_in_child(self, event: Event, context: CheckContext) -> None:
        """The command in a child process of its own host settings (its time zone)."""
        self.stats.subprocess_runs += 1
        expected = expected_to_succeed(event.argv, self.landing, context.before)
        child = self.driver.pool.take(event.time_zone)
        child.start(event.argv, self._child_env(event))
        try:
            child.process.wait(timeout=CONCURRENT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
        self._expect(child.outcome(), expected)

    def _run_concurrent(self, event: Event, context: CheckContext) -> None:
        self.stats.subprocess_runs += 1
        self.stats.in_process_runs += 1
        expected_first = expected_to_succeed(event.argv, self.landing, context.before)
        expected_second = _option(event.second_argv, "--lock-wait") != "0.5" and (
            expected_to_succeed(event.second_argv, self.landing, context.before)
        )
        child = self.driver.pool.take()
        child.start(event.argv, self._child_env(event))
        deadline = time.monotonic() + KILL_WATCH_SECONDS
        while child.process.poll() is None and time.monotonic() < deadline:
            holder = locking.read_holder(self.warehouse)
            if holder is not None and holder.pid == child.pid:
                break
            time.sleep(0.02)
        second = call_cli(event.second_argv)
        try:
            child.process.wait(timeout=CONCURRENT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
        self._expect(child.outcome(), expected_first)
        self._expect(second, expected_second)

    def _check_chunking_invariance(self, number: int) -> None:
        """The scenario's landing built again in a fresh warehouse, under another chunking
        and order, must give the consumer relations the scenario's warehouse now holds
        (after its final backfill), day by day for every day ready now."""
        event = Event("fresh", list(self.scenario.fresh), days=list(self.scenario.days))
        fresh = self.warehouse.parent.parent / "fresh" / self.warehouse.name  # same file name
        with _environment(
            {
                "REFILL_WAREHOUSE": str(fresh),
                "REFILL_WEBHOOK_URL": self.driver.webhook.url(f"{self.scenario.seed}-fresh"),
            }
        ):
            outcome = call_cli(event.argv)
        self.stats.in_process_runs += 1
        self.pending = []
        self._expect(outcome, True)
        for invariant, detail in self.pending:
            self._finding("liveness", invariant, detail, number, event)
        # The days both builds published from the day's current export (a day either one
        # could not build is a liveness finding above, not a difference of chunking).
        current = {day: self.truths.current_fingerprint(day) for day in self.scenario.days}
        built_fresh = invariants.read_state(fresh).published() if fresh.exists() else {}
        days = [
            day
            for day, fingerprint in current.items()
            if fingerprint is not None
            and all(
                published.get((model, day), (None, None))[1] == fingerprint
                for published in (self.state.published(), built_fresh)
                for model in invariants.CHECKED_MODELS
            )
        ]
        for violation in invariants.compare_builds(self.warehouse, fresh, days):
            self._violation(violation, number, event)


class FxSeed:
    """The fx seed of the harness's copy of the project: corrected by seed_change events
    (grown past dbt's 1 MiB checksum limit first), restored before each scenario, and read
    by the harness itself for the rates of now (current_at_current_rates)."""

    def __init__(self, path: Path):
        self.path = path
        self.pristine = path.read_bytes()
        self._read: tuple[tuple, dict] | None = None

    def restore(self) -> None:
        if self.path.read_bytes() != self.pristine:
            self.path.write_bytes(self.pristine)

    def correct(self, change: SeedChange) -> None:
        if self.path.stat().st_size <= DBT_SEED_CHECKSUM_LIMIT:
            grow_seed_past(self.path)
        rate = fx_rates_of(self.path)[(change.day, change.currency)]
        corrected = (rate * Decimal(change.factor)).quantize(Decimal("0.000001"))
        set_fx_rate(self.path, change.day, change.currency, corrected)

    def rates(self) -> dict:
        facts = self.path.stat()
        identity = (facts.st_size, facts.st_mtime_ns, facts.st_ino)
        if self._read is None or self._read[0] != identity:
            self._read = (identity, fx_rates_of(self.path))
        return self._read[1]


def _current_versions() -> dict[str, str] | None:
    """refill's current code version per model, as this process's refill computes it."""
    from refill.warehouse.dbt_runner import DbtError, shared_project

    try:
        return shared_project().code_versions()
    except DbtError:
        return None


def _reference_now():
    """A day's reference fingerprint now (the seed rows it reads), as this process's refill
    computes it, for the primary dataset."""
    from refill.warehouse.dbt_runner import DbtError, shared_project

    try:
        catalog = shared_project().catalog
    except DbtError:
        return None
    return lambda day: catalog.reference_fingerprints(day, day)[day][0]


def _nothing_published(outcome: RunOutcome) -> bool:
    """A daily run that failed published nothing; a backfill says how many days it did."""
    match = re.search(r"published (\d+) day\(s\)", outcome.message)
    return match is None or match.group(1) == "0"


def call_dbt(argv: list[str]) -> RunOutcome:
    """`dbt <argv>` in this process, on the process's parsed project (the patched copy)."""
    from refill.warehouse.dbt_runner import outcome_of, shared_project

    try:
        outcome = outcome_of(shared_project().invoke(list(argv)))
    except Exception:  # a crash of dbt or refill's plugin is a finding, not the harness's
        return RunOutcome(99, f"dbt crashed: {traceback.format_exc()[-600:]}")
    return RunOutcome(0 if outcome.success else 1, outcome.message)


def _wait_for_moment(child: Child, warehouse: Path, moment: str, delay: float) -> list | None:
    """Wait for the moment to signal the child: None if it finished first, else the days of
    the chunk it was building then ([] when the moment is not in a chunk)."""
    started = time.monotonic()
    deadline = started + KILL_WATCH_SECONDS
    seen_chunk = False
    building: list = []
    first: list | None = None  # in_later_chunk: the first chunk's days
    while child.process.poll() is None:
        now = time.monotonic()
        if now > deadline:
            break
        if moment == "delay":
            if now - started >= delay:
                break
        else:
            holder = locking.read_holder(warehouse)
            in_chunk = holder is not None and holder.pid == child.pid and bool(holder.partitions)
            if moment == "in_later_chunk" and in_chunk and first is None:
                first = list(holder.partitions)
            later = moment == "in_later_chunk" and in_chunk and holder.partitions != first
            if (moment == "in_chunk" and in_chunk) or later:
                building = list(holder.partitions)
                time.sleep(delay)
                break
            if moment == "between_chunks":
                if in_chunk:
                    seen_chunk = True
                elif seen_chunk:
                    break
        time.sleep(0.005)
    return building if child.process.poll() is None else None
