"""The deployments in prefect.yaml, as a scheduler runs them.

The first tests read prefect.yaml and load every entrypoint. The last one runs them for
real: a Prefect server on a free local port, the process work pool, `prefect deploy --all`,
a worker, a backfill deployment run and a daily one, then the warehouse and the artifacts.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb
import httpx
import pytest
import yaml
from prefect.flows import load_flow_from_entrypoint

from refill.sample_data import DaySpec, write_day
from refill.settings import PACKAGE_PROJECT_DIR as PROJECT_DIR

DEPLOYMENTS = yaml.safe_load((PROJECT_DIR / "prefect.yaml").read_text())["deployments"]
PREFECT = Path(sys.executable).with_name("prefect")


def _by_name(name: str) -> dict:
    return next(d for d in DEPLOYMENTS if d["name"] == name)


@pytest.mark.parametrize("deployment", DEPLOYMENTS, ids=[d["name"] for d in DEPLOYMENTS])
def test_each_deployment_loads_and_its_parameters_validate(deployment):
    flow = load_flow_from_entrypoint(deployment["entrypoint"])

    parameters = dict(deployment.get("parameters", {}))
    required = set(flow.parameters.required or [])
    # the ad-hoc backfill is started with its range; nothing else may be required
    if deployment["name"] == "backfill":
        assert required == {"start", "end"}
        parameters.update(start="2026-01-01", end="2026-01-07")
    else:
        assert required == set()

    validated = flow.validate_parameters(parameters)
    assert set(parameters) <= set(validated)


def test_the_daily_deployment_is_scheduled_and_waits_three_hours():
    daily = _by_name("daily")
    assert daily["schedules"][0]["cron"] == "0 3 * * *"
    assert daily["parameters"]["wait_for_ready_seconds"] == 3 * 3600


def test_the_backfill_deployment_asks_before_restating():
    backfill = _by_name("backfill")
    assert backfill["parameters"]["confirm"] is False
    assert "start" not in backfill["parameters"] and "end" not in backfill["parameters"]


def test_no_module_of_the_package_can_hide_an_installed_package():
    # GIVEN every top-level name an installed distribution provides
    installed = set(importlib.metadata.packages_distributions())
    # WHEN the package's modules are listed
    modules = {path.stem for path in (PROJECT_DIR / "flows").glob("*.py")}
    # THEN none of them takes such a name (a worker or a script run puts flows/ on sys.path)
    assert modules & installed == set()


def test_backfills_of_one_warehouse_run_one_at_a_time_and_daily_runs_do_not_queue_behind():
    backfill, daily = _by_name("backfill"), _by_name("daily")
    assert backfill["concurrency_limit"]["limit"] == 1
    assert backfill["concurrency_limit"]["collision_strategy"] == "ENQUEUE"
    # the daily run takes the warehouse between a backfill's chunks (the lock's live
    # priority), so it shares no deployment limit with the backfill
    assert "concurrency_limit" not in daily


# -- the real thing ------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Processes:
    """Every process the test starts, each in its own session; all stopped at the end."""

    def __init__(self, logs: Path, environment: dict[str, str]):
        self.logs = logs
        self.environment = environment
        self.started: list[subprocess.Popen] = []

    def start(self, name: str, *command: str, cwd: Path) -> subprocess.Popen:
        log = (self.logs / f"{name}.log").open("w")
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=self.environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.started.append(process)
        return process

    def run(self, *command: str, cwd: Path, timeout: float = 180) -> str:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=self.environment,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def stop_all(self) -> None:
        for process in reversed(self.started):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self.started):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text()


def _wait_for_health(api_url: str, server: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, "the Prefect server exited"
        try:
            if httpx.get(f"{api_url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError("the Prefect server did not answer within {timeout}s")


def _final_state(api_url: str, flow_run_id: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = httpx.get(f"{api_url}/flow_runs/{flow_run_id}", timeout=10).json()
        if run["state"]["type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
            return run
        time.sleep(1)
    raise AssertionError(f"flow run {flow_run_id} did not finish within {timeout}s: {run}")


def _run_deployment(processes: Processes, name: str, parameters: dict) -> str:
    output = processes.run(
        str(PREFECT),
        "deployment",
        "run",
        name,
        "--params",
        json.dumps(parameters),
        cwd=processes.logs,
    )
    return re.search(r"UUID: ([0-9a-f-]{36})", output).group(1)


@pytest.mark.slow
def test_the_deployments_run_on_a_real_server_and_worker(tmp_path: Path):
    # GIVEN landing data for three days, a fresh warehouse, and a Prefect home of its own;
    # REFILL_PROJECT_DIR is unset and the worker starts outside the project (its default)
    first = date(2026, 1, 1)
    days = [first + timedelta(days=n) for n in range(3)]
    landing = tmp_path / "landing"
    for day in days:
        write_day(landing, day, DaySpec(payments=60))
    warehouse = tmp_path / "warehouse" / "refill.duckdb"
    port = _free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("PREFECT_")
    }
    environment.pop("REFILL_PROJECT_DIR", None)
    environment.update(
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PREFECT_API_URL=api_url,
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        DO_NOT_TRACK="1",
        REFILL_LANDING=str(landing),
        REFILL_WAREHOUSE=str(warehouse),
    )
    processes = Processes(tmp_path, environment)
    try:
        server = processes.start(
            "server",
            str(PREFECT),
            "server",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-ui",
            cwd=tmp_path,
        )
        _wait_for_health(api_url, server)
        processes.run(
            str(PREFECT), "work-pool", "create", "refill", "--type", "process", cwd=tmp_path
        )
        processes.run(str(PREFECT), "--no-prompt", "deploy", "--all", cwd=PROJECT_DIR)
        processes.start("worker", str(PREFECT), "worker", "start", "--pool", "refill", cwd=tmp_path)

        # WHEN the backfill deployment runs twice at once for the three days, each signed off
        # to restate them (whichever the worker starts second has them to rebuild: a plain
        # backfill started second would find nothing to do and write no run), and then the
        # daily deployment for the last day
        window = {"start": str(days[0]), "end": str(days[-1]), "retries": 1}
        restating = {**window, "restate": True, "confirm": True}
        backfills = [
            _run_deployment(processes, "refill-backfill/backfill", restating),
            _run_deployment(processes, "refill-backfill/backfill", restating),
        ]
        finished = [_final_state(api_url, run_id, timeout=420) for run_id in backfills]
        daily = _run_deployment(
            processes,
            "refill-daily/daily",
            # a day the backfills published: rebuilding it restates it, so the run signs off
            {
                "logical_date": str(days[-1]),
                "wait_for_ready_seconds": 0,
                "retries": 1,
                "confirm": True,
            },
        )
        finished.append(_final_state(api_url, daily, timeout=300))

        # THEN every run completed
        states = {run["name"]: run["state"]["type"] for run in finished}
        assert set(states.values()) == {"COMPLETED"}, (states, processes.log("worker")[-4000:])
        # the two backfills of the one warehouse did not overlap
        first_run, second_run = sorted(finished[:2], key=lambda run: run["start_time"])
        assert first_run["end_time"] <= second_run["start_time"]
        # the warehouse holds the three days, and the run log says who built them
        with duckdb.connect(str(warehouse), read_only=True) as connection:
            built = connection.execute(
                "select distinct event_date from main.fct_payments order by 1"
            ).fetchall()
            runs = connection.execute(
                "select command, outcome from ops.run_log order by started_at"
            ).fetchall()
        assert [row[0] for row in built] == days
        assert runs == [
            ("backfill", "succeeded"),
            ("backfill", "succeeded"),
            ("daily", "succeeded"),
        ]
        # and the boards are artifacts of the server
        artifacts = httpx.post(f"{api_url}/artifacts/filter", json={}, timeout=10).json()
        assert {"refill-backfill-board", "refill-daily-board"} <= {a["key"] for a in artifacts}
    finally:
        processes.stop_all()
