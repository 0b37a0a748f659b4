"""The contenders, each run as its own process on a fresh warehouse over the same landing.

(a) refill      `python -m refill backfill --start --end`, default settings
(b) microbatch  `dbt build` of bench/microbatch_project (incremental_strategy microbatch,
                batch_size day) with --event-time-start/--event-time-end
(c) floor       `python -m bench.floor`: bench/floor.sql, one DuckDB script
(d) naive       `dbt build --vars '{start_date: D, end_date: D}'` of the refill project,
                a new process per day
(e) plain       `dbt build` of bench/plain_microbatch_project: the microbatch a team writes
                first (read_json with ignore_errors, row_number() dedup, fx join), with
                --event-time-start/--event-time-end

Every run gets its own warehouse file (always named refill.duckdb: DuckDB names the
catalog after the file) and its own dbt target folder, kept between repetitions of the
same role so dbt's partial parsing works as it does on a user's machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import duckdb

from bench.floor import declared_rule
from bench.measure import Measurement, run_measured
from refill.sample_data import DATASET

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
MICROBATCH_PROJECT = BENCH_DIR / "microbatch_project"
PLAIN_MICROBATCH_PROJECT = BENCH_DIR / "plain_microbatch_project"
WAREHOUSE_NAME = "refill.duckdb"

_BACKFILL_SUMMARY = re.compile(
    r"refill backfill: published (?P<days>\d+) day\(s\).*; (?P<rows>\d+) rows in "
    r"(?P<seconds>[\d.]+)s"
)
_DAILY_SUMMARY = re.compile(
    r"refill daily: .*published (?P<rows>\d+) payments in (?P<seconds>[\d.]+)s"
)


@dataclass
class Run:
    """One measured run of a contender, with what it published."""

    contender: str  # a, b, c, d, e (a scaling run is an a), rerun, setup
    label: str
    days: int
    measurement: Measurement
    published: dict = field(default_factory=dict)  # rows, amount, amount_usd, quarantined
    details: dict = field(default_factory=dict)  # e.g. flow seconds, chunk seconds

    def to_json(self) -> dict:
        return {
            "contender": self.contender,
            "label": self.label,
            "days": self.days,
            **self.measurement.to_json(),
            "published": self.published,
            "details": self.details,
        }


@dataclass
class Workbench:
    """Where a bench run works, and the environment every contender shares."""

    out: Path
    product_dir: Path  # the refill checkout whose `flows` and dbt project are measured
    prefect_api_url: str | None = None
    timeout_seconds: float = 3600

    @property
    def python(self) -> str:
        return sys.executable

    @property
    def dbt(self) -> str:
        return str(Path(sys.executable).with_name("dbt"))

    def role_dir(self, role: str) -> Path:
        return self.out / "work" / role

    def fresh_warehouse(self, role: str) -> Path:
        """An empty warehouse path for `role` (its dbt target folder is kept)."""
        folder = self.role_dir(role) / "warehouse"
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        return folder / WAREHOUSE_NAME

    def env(self, role: str, landing: Path, warehouse: Path) -> dict[str, str]:
        env = {
            **os.environ,
            "REFILL_LANDING": str(landing),
            "REFILL_WAREHOUSE": str(warehouse),
            # dbt's artifacts (and its partial-parse cache) per role, out of the checkout
            "DBT_TARGET_PATH": str(self.role_dir(role) / "target"),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "DO_NOT_TRACK": "1",
        }
        env.pop("DBT_TARGET", None)
        if self.prefect_api_url:
            env["PREFECT_API_URL"] = self.prefect_api_url
        return env

    def log(self, role: str, name: str) -> Path:
        return self.role_dir(role) / "logs" / f"{name}.log"

    def measure(
        self,
        role: str,
        name: str,
        command: list[str],
        cwd: Path,
        landing: Path,
        warehouse: Path,
        env: dict[str, str | None] | None = None,
    ) -> Measurement:
        """Run one contender process for `role` and measure it; its output goes to a log.
        `env` overrides the shared environment (a None value unsets the variable)."""
        environment = self.env(role, landing, warehouse)
        for variable, value in (env or {}).items():
            if value is None:
                environment.pop(variable, None)
            else:
                environment[variable] = value
        return run_measured(
            command,
            cwd=cwd,
            env=environment,
            log=self.log(role, name),
            timeout_seconds=self.timeout_seconds,
        )

    def dbt_command(self, role: str, project_dir: Path, command: str, *args: str) -> list[str]:
        """The dbt CLI on `project_dir`, its logs in the role's folder."""
        return [
            self.dbt,
            command,
            "--project-dir",
            str(project_dir),
            "--profiles-dir",
            str(project_dir),
            "--log-path",
            str(self.role_dir(role) / "dbt-logs"),
            *args,
        ]


def refill_backfill(
    bench: Workbench,
    role: str,
    landing: Path,
    start: date,
    end: date,
    *,
    run_name: str = "backfill",
) -> tuple[Run, Path]:
    """(a): `refill backfill` of [start, end] with default settings, on an empty warehouse.
    Returns the run and the warehouse it built."""
    warehouse = bench.fresh_warehouse(role)
    command = [
        bench.python,
        "-m",
        "refill",
        "backfill",
        "--start",
        start.isoformat(),
        "--end",
        end.isoformat(),
    ]
    measurement = bench.measure(role, run_name, command, bench.product_dir, landing, warehouse)
    days = (end - start).days + 1
    summary = _BACKFILL_SUMMARY.search(Path(measurement.log).read_text(errors="replace"))
    details = {}
    if summary:
        details = {
            "flow_seconds": float(summary["seconds"]),
            "days_published": int(summary["days"]),
        }
    details["chunk_seconds"] = chunk_seconds(warehouse, "backfill")
    run = Run(
        "a",
        f"refill backfill {days}d",
        days,
        measurement,
        published_totals(warehouse, start, end),
        details,
    )
    return run, warehouse


def refill_daily(
    bench: Workbench, role: str, landing: Path, warehouse: Path, day: date, name: str
) -> Run:
    """A one-day rerun: `refill daily --date day --yes` on a warehouse that has it published
    (a rerun of a published day restates it, so it is signed off)."""
    command = [bench.python, "-m", "refill", "daily", "--date", day.isoformat(), "--yes"]
    measurement = bench.measure(role, name, command, bench.product_dir, landing, warehouse)
    summary = _DAILY_SUMMARY.search(Path(measurement.log).read_text(errors="replace"))
    details = {"flow_seconds": float(summary["seconds"])} if summary else {}
    return Run(
        "rerun",
        f"refill daily {day}",
        1,
        measurement,
        published_totals(warehouse, day, day),
        details,
    )


def microbatch_rule_vars() -> str:
    """The --vars of a microbatch contender: refill's line rule for the example dataset, as
    its one declaration gives it, reading the model's `markets` and `currencies` CTEs."""
    relations = {"markets": "markets", "fx_rates_daily": "currencies"}
    return json.dumps({"refill_rule": declared_rule(DATASET, relations)})


def microbatch(bench: Workbench, landing: Path, start: date, end: date, name: str) -> Run:
    """(b): dbt's microbatch strategy over [start, end], one batch per day, one dbt build."""
    role = "b-microbatch"
    warehouse = bench.fresh_warehouse(role)
    command = bench.dbt_command(
        role,
        MICROBATCH_PROJECT,
        "build",
        "--event-time-start",
        start.isoformat(),
        "--event-time-end",
        (end + timedelta(days=1)).isoformat(),  # exclusive
        "--vars",
        microbatch_rule_vars(),
    )
    measurement = bench.measure(role, name, command, MICROBATCH_PROJECT, landing, warehouse)
    days = (end - start).days + 1
    return Run(
        "b", f"dbt microbatch {days}d", days, measurement, published_totals(warehouse, start, end)
    )


def plain_microbatch(
    bench: Workbench, landing: Path, start: date, end: date, name: str
) -> tuple[Run, Path]:
    """(e): the plain microbatch over [start, end], one batch per day, one dbt build.
    Returns the run and the warehouse it built (for the reconciliation with refill's)."""
    role = "e-plain-microbatch"
    warehouse = bench.fresh_warehouse(role)
    command = bench.dbt_command(
        role,
        PLAIN_MICROBATCH_PROJECT,
        "build",
        "--event-time-start",
        start.isoformat(),
        "--event-time-end",
        (end + timedelta(days=1)).isoformat(),  # exclusive
    )
    measurement = bench.measure(role, name, command, PLAIN_MICROBATCH_PROJECT, landing, warehouse)
    days = (end - start).days + 1
    published = published_totals(warehouse, start, end, has_quarantine=False)
    return Run("e", f"plain dbt microbatch {days}d", days, measurement, published), warehouse


def floor(bench: Workbench, landing: Path, start: date, end: date, name: str) -> Run:
    """(c): the transformation as one DuckDB script straight from the landing files."""
    role = "c-floor"
    warehouse = bench.fresh_warehouse(role)
    command = [
        bench.python,
        "-m",
        "bench.floor",
        "--landing",
        str(landing),
        "--warehouse",
        str(warehouse),
        "--start",
        start.isoformat(),
        "--end",
        end.isoformat(),
    ]
    measurement = bench.measure(role, name, command, REPO_DIR, landing, warehouse)
    days = (end - start).days + 1
    return Run(
        "c", f"DuckDB script {days}d", days, measurement, published_totals(warehouse, start, end)
    )


def naive_loop(bench: Workbench, landing: Path, start: date, days: int, name: str) -> list[Run]:
    """(d): `dbt build` as a new process per day, oldest first, on one warehouse."""
    role = "d-naive"
    warehouse = bench.fresh_warehouse(role)
    runs = []
    for offset in range(days):
        day = start + timedelta(days=offset)
        window = {"start_date": day.isoformat(), "end_date": day.isoformat()}
        command = bench.dbt_command(role, bench.product_dir, "build", "--vars", json.dumps(window))
        measurement = bench.measure(
            role, f"{name}-{day}", command, bench.product_dir, landing, warehouse
        )
        runs.append(
            Run("d", f"dbt build {day}", 1, measurement, published_totals(warehouse, day, day))
        )
    return runs


def published_totals(
    warehouse: Path, start: date, end: date, *, has_quarantine: bool = True
) -> dict:
    """What a contender published for [start, end]: payments, their amount in currency and
    in USD, quarantined lines (None for a contender that keeps no quarantine). The same
    figures from (a), (b) and (c) show that they did the same work."""
    if not warehouse.exists():
        return {}
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        rows, amount, amount_usd = connection.execute(
            "select count(*), coalesce(sum(amount), 0)::varchar, "
            "coalesce(sum(amount_usd), 0)::decimal(38, 2)::varchar from main.fct_payments "
            "where event_date between ? and ?",
            [start, end],
        ).fetchone()
        quarantined = None
        if has_quarantine:
            quarantined = connection.execute(
                "select count(*) from main.payments_quarantine where landed_date between ? and ?",
                [start, end],
            ).fetchone()[0]
    return {"rows": rows, "amount": amount, "amount_usd": amount_usd, "quarantined": quarantined}


def chunk_seconds(warehouse: Path, command: str) -> list[float]:
    """How long each chunk's build took, from refill's own attempt records."""
    if not warehouse.exists():
        return []
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        rows = connection.execute(
            "select epoch(max(ended_at) - min(started_at)) from ops.partition_attempts "
            "where command = ? and outcome = 'published' "
            "group by run_id, chunk_start, chunk_end order by min(started_at)",
            [command],
        ).fetchall()
    return [round(float(seconds), 3) for (seconds,) in rows]
