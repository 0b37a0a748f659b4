"""The fixed cost of dbt's parse in a refill command, before and after refill's one-parse
reuse, side by side in one run:

    python -m bench.parse_cost [--out DIR]          # make bench-parse

refill parses the project once per process WITHOUT the window (refill.warehouse.dbt_runner:
`dbt parse`, then every build, check and plan invoked on that manifest with the window's
vars), so dbt's partial parsing survives a new window. The code that parsed with the window
no longer exists; "before" is measured as what dbt does when the window is in the parse's
vars: a full re-parse (`dbt parse --vars` of a new window: "Unable to do partial parsing
because config vars ... changed"). Each command is measured twice, in the same project
copy and dbt target folder (a user's checkout):

- after: the target folder's partial-parse state is refill's own (its last command's);
- before: a `dbt parse --vars` of a new window ran just before in the same target folder,
  so the command's parse is a full one, as every parse was when the window was a parse var.

The commands: a refusal (`refill backfill --restate` of published days without --yes:
refused after its plan), a dry run (the same with `--dry-run`) and a cold daily (`refill
daily --date`, its own temporary Prefect server, on a copy of a warehouse where the days
before are published). Each runs under bench.command_phases, which times its `dbt parse`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

from refill.rules.window import window_vars
from refill.sample_data import write_days

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
FIRST = date(2026, 1, 1)
DAYS = 4  # three published, the fourth the daily's
BIN = Path(sys.executable).parent
PROJECT_PARTS = ("dbt_project.yml", "profiles.yml", "models", "macros", "seeds", "data_tests")


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


class Bench:
    def __init__(self, out: Path) -> None:
        shutil.rmtree(out, ignore_errors=True)
        self.out = out
        self.project = out / "project"
        self.project.mkdir(parents=True)
        for part in PROJECT_PARTS:
            source = REPO_DIR / part
            if source.is_dir():
                shutil.copytree(source, self.project / part)
            else:
                shutil.copy2(source, self.project / part)
        self.landing = out / "landing"
        write_days(self.landing, FIRST, DAYS)
        self.published = out / "published.duckdb"
        self.warehouse = out / "warehouse" / "refill.duckdb"
        self.warehouse.parent.mkdir()
        self.prefect_home = out / "prefect-home"

    def env(self) -> dict[str, str]:
        environment = {
            **os.environ,
            "REFILL_PROJECT_DIR": str(self.project),
            "REFILL_LANDING": str(self.landing),
            "REFILL_WAREHOUSE": str(self.warehouse),
            "DBT_TARGET_PATH": str(self.project / "target"),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_HOME": str(self.prefect_home),
        }
        for unset in ("PREFECT_API_URL", "DBT_TARGET"):
            environment.pop(unset, None)
        return environment

    def run(self, command: list[str], log: str) -> tuple[float, subprocess.CompletedProcess]:
        clock = time.monotonic()
        done = subprocess.run(
            command, cwd=REPO_DIR, env=self.env(), capture_output=True, text=True, timeout=1800
        )
        seconds = time.monotonic() - clock
        (self.out / f"{log}.log").write_text(done.stdout + done.stderr)
        return seconds, done

    def dbt(self, *args: str, log: str) -> float:
        command = [str(BIN / "dbt"), *args, "--project-dir", str(self.project)]
        command += ["--profiles-dir", str(self.project)]
        seconds, done = self.run(command, log)
        if done.returncode != 0:
            raise SystemExit(f"{log}: dbt failed, see {self.out / (log + '.log')}")
        return seconds

    def refill(self, arguments: list[str], log: str) -> dict:
        report = self.out / f"{log}-phases.json"
        command = [sys.executable, "-m", "bench.command_phases", str(report), "--", *arguments]
        seconds, _ = self.run(command, log)
        phases = json.loads(report.read_text())
        return {
            "seconds": round(seconds, 2),
            "status": phases["status"],
            "dbt parse": phases["phases"].get("dbt parse"),
        }


def measure(out: Path) -> dict:
    bench = Bench(out)
    started_load = _load()
    subprocess.run(
        [str(BIN / "prefect"), "server", "database", "upgrade", "-y"],
        env=bench.env(),
        capture_output=True,
        check=True,
        timeout=600,
    )
    published = (FIRST, FIRST + timedelta(days=DAYS - 2))
    daily_day = FIRST + timedelta(days=DAYS - 1)
    bench.dbt("build", "--vars", json.dumps(window_vars(*published)), log="setup")
    shutil.copy2(bench.warehouse, bench.published)
    restate = ["backfill", "--start", str(published[0]), "--end", str(published[1]), "--restate"]
    commands = {
        "refusal": [*restate],
        "dry run": [*restate, "--dry-run"],
        "cold daily": ["daily", "--date", str(daily_day)],
    }
    # refill's own parse state first (a user's previous refill command)
    bench.refill(commands["dry run"], log="warm-up")
    expected_status = {"refusal": 1, "dry run": 0, "cold daily": 0}
    results: dict = {"load_at_start": started_load, "commands": {}, "dbt_parse": {}}
    new_windows = iter(range(1, 100))
    for name, arguments in commands.items():
        row = {}
        for when in ("after", "before"):
            if when == "before":
                n = next(new_windows)
                window = window_vars(FIRST + timedelta(days=n), FIRST + timedelta(days=n))
                seconds = bench.dbt("parse", "--vars", json.dumps(window), log=f"parse-{n}")
                results["dbt_parse"].setdefault("new window (full)", []).append(round(seconds, 2))
            shutil.copy2(bench.published, bench.warehouse)
            row[when] = bench.refill(arguments, log=f"{name.replace(' ', '-')}-{when}")
            if row[when]["status"] != expected_status[name]:
                raise SystemExit(f"{name} ({when}) exited {row[when]['status']}: see its log")
        results["commands"][name] = row
    results["load_at_end"] = _load()
    return results


def table(results: dict) -> str:
    lines = [
        "| command | before: full parse | after: refill's reused parse |",
        "|---|---|---|",
    ]
    for name, row in results["commands"].items():
        cells = [
            f"{row[w]['seconds']:.1f} s (parse {row[w]['dbt parse'] or 0:.1f} s, "
            f"exit {row[w]['status']})"
            for w in ("before", "after")
        ]
        lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
    full = results["dbt_parse"].get("new window (full)", [])
    lines.append("")
    lines.append(
        "`dbt parse --vars` of a new window (full): "
        + ", ".join(f"{s:.1f} s" for s in full)
        + f"; load average {results['load_at_start']} at the start, "
        f"{results['load_at_end']} at the end"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_DIR / "target" / "bench-parse")
    args = parser.parse_args(argv)
    results = measure(args.out.resolve())
    (args.out / "parse-cost.json").write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
