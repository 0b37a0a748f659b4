"""The command as a user types it: `refill backfill` and `refill daily` from the shell, each a
fresh process, cold (no PREFECT_API_URL: the command starts its temporary Prefect server)
and with a Prefect server already running (the bench's); a bare `dbt build --vars` of the
same day beside the daily; and where a command's fixed cost goes (bench.command_phases).

Every run gets a fresh warehouse (a copy of the setup's, for the daily and dbt build: the
days before the day landed and published, as on the morning a daily runs) and keeps its
dbt target folder between repetitions, and the cold commands share one Prefect home whose
database exists before the first is measured, as on a user's machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from datetime import date
from pathlib import Path

from bench import contenders
from bench.contenders import Run, Workbench

# `python -X importtime` lines: "import time: self [us] | cumulative | imported package"
_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")
IMPORT_GROUPS = (
    "prefect",
    "starlette",
    "fastapi",
    "dbt",
    "dbt_common",
    "mashumaro",
    "networkx",
    "duckdb",
    "pydantic",
    "refill",
    "flows",
)


def import_seconds(log_text: str) -> dict[str, float]:
    """Seconds spent importing, by top-level package (self time summed, so nothing counts
    twice), the packages outside IMPORT_GROUPS together as `other`."""
    totals: dict[str, float] = {}
    for line in log_text.splitlines():
        found = _IMPORT_LINE.match(line)
        if not found:
            continue
        package = found[4].split(".")[0]
        group = package if package in IMPORT_GROUPS else "other"
        totals[group] = totals.get(group, 0.0) + int(found[1]) / 1e6
    return {group: round(seconds, 4) for group, seconds in sorted(totals.items())}


def prefect_home(bench: Workbench) -> Path:
    """The Prefect home of the cold commands, one for all as a user has one: its database
    is made once, before any is measured (a user's first command ever pays that, once)."""
    home = bench.out / "work" / "prefect-home-cold"
    if not (home / "prefect.db").exists():
        home.mkdir(parents=True, exist_ok=True)
        environment = {**os.environ, "PREFECT_HOME": str(home)}
        environment.pop("PREFECT_API_URL", None)
        subprocess.run(
            [str(Path(bench.python).with_name("prefect")), "server", "database", "upgrade", "-y"],
            env=environment,
            capture_output=True,
            check=True,
            timeout=600,
        )
    return home


def _env_overrides(bench: Workbench, cold: bool) -> dict[str, str | None]:
    overrides: dict[str, str | None] = {}
    if cold:
        overrides["PREFECT_HOME"] = str(prefect_home(bench))
        overrides["PREFECT_API_URL"] = None  # the command starts its temporary server
    return overrides


def refill_command(
    bench: Workbench,
    role: str,
    landing: Path,
    warehouse: Path,
    arguments: list[str],
    name: str,
    *,
    cold: bool,
    phases: bool = False,
) -> tuple[dict, dict | None]:
    """One `refill <arguments>` from the shell; with `phases`, under bench.command_phases.
    Returns the measurement and, with `phases`, the phase report with import seconds."""
    if phases:
        report = bench.role_dir(role) / f"{name}-phases.json"
        command = [
            bench.python,
            "-X",
            "importtime",
            "-m",
            "bench.command_phases",
            str(report),
            "--",
            *arguments,
        ]
        cwd = contenders.REPO_DIR
    else:
        command = [str(Path(bench.python).with_name("refill")), *arguments]
        cwd = bench.product_dir
    measurement = bench.measure(
        role, name, command, cwd, landing, warehouse, env=_env_overrides(bench, cold)
    )
    if not phases:
        return measurement, None
    detail = json.loads(report.read_text())
    detail["imports"] = import_seconds(Path(measurement.log).read_text(errors="replace"))
    return measurement, detail


def cold_backfill(bench: Workbench, landing: Path, start: date, end: date, name: str) -> Run:
    """`refill backfill` of [start, end] on an empty warehouse, cold: the command starts its
    own temporary Prefect server (contender (a) is the same with the bench's server)."""
    role = "a-cold"
    days = (end - start).days + 1
    arguments = ["backfill", "--start", start.isoformat(), "--end", end.isoformat()]
    warehouse = bench.fresh_warehouse(role)
    measurement, _ = refill_command(bench, role, landing, warehouse, arguments, name, cold=True)
    return Run(
        role,
        f"refill backfill {days}d from the shell, cold (temporary server)",
        days,
        measurement,
        contenders.published_totals(warehouse, start, end),
    )


def next_day_runs(
    bench: Workbench, landing: Path, setup_warehouse: Path, day: date, name: str
) -> list[Run]:
    """The next day's run from the shell: `refill daily --date day` cold and with a server,
    and a bare `dbt build --vars` of the day, each on a copy of the setup's warehouse."""
    runs = []
    arguments = ["daily", "--date", day.isoformat()]
    for cold in (True, False):
        role = "daily-cold" if cold else "daily-server"
        warehouse = _copy_warehouse(bench, role, setup_warehouse)
        measurement, _ = refill_command(bench, role, landing, warehouse, arguments, name, cold=cold)
        runs.append(
            Run(
                role,
                f"refill daily {day} from the shell, "
                + ("cold (temporary server)" if cold else "server running"),
                1,
                measurement,
                contenders.published_totals(warehouse, day, day),
            )
        )
    role = "daily-dbt"
    warehouse = _copy_warehouse(bench, role, setup_warehouse)
    window = json.dumps({"start_date": day.isoformat(), "end_date": day.isoformat()})
    command = bench.dbt_command(role, bench.product_dir, "build", "--vars", window)
    measurement = bench.measure(role, name, command, bench.product_dir, landing, warehouse)
    runs.append(
        Run(
            role,
            f"dbt build --vars {day} from the shell",
            1,
            measurement,
            contenders.published_totals(warehouse, day, day),
        )
    )
    return runs


def phase_runs(
    bench: Workbench,
    landing: Path,
    setup_warehouse: Path,
    start: date,
    end: date,
    day: date,
    name: str,
) -> list[Run]:
    """Where the fixed cost goes: a cold backfill of [start, end] and a cold daily of `day`,
    each once under bench.command_phases, in the role of the same cold command (its
    warehouse path and dbt target folder: dbt parses partially, as a user's next run does)."""
    runs = []
    for role, arguments, warehouse, days in (
        (
            "a-cold",
            ["backfill", "--start", start.isoformat(), "--end", end.isoformat()],
            None,
            (end - start).days + 1,
        ),
        ("daily-cold", ["daily", "--date", day.isoformat()], setup_warehouse, 1),
    ):
        target = (
            _copy_warehouse(bench, role, warehouse) if warehouse else bench.fresh_warehouse(role)
        )
        measurement, detail = refill_command(
            bench, role, landing, target, arguments, name, cold=True, phases=True
        )
        phase_role = "phases-backfill" if arguments[0] == "backfill" else "phases-daily"
        runs.append(
            Run(phase_role, f"refill {arguments[0]} cold, phases", days, measurement, {}, detail)
        )
    return runs


def _copy_warehouse(bench: Workbench, role: str, source: Path) -> Path:
    target = bench.fresh_warehouse(role)
    shutil.copy2(source, target)
    return target
