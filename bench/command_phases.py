"""Where a `refill` command's fixed cost goes: the command run as the console script runs
it, with timers around the calls that make up its start-up, and a JSON line of phases.

    python -X importtime -m bench.command_phases REPORT.json -- backfill --start D --end D

Timed: dbt's parse and every dbt invocation by its command (seed, build, ...), the
temporary Prefect server (launched to answering, and how long the command waited for it),
the readiness verdicts, the code versions. Imports are read from `-X importtime` in the
log (bench.command.import_seconds). A timer whose target is gone reports nothing.
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

_totals: dict[str, float] = defaultdict(float)
_counts: dict[str, int] = defaultdict(int)
_active = threading.local()
_server_launched: list[float] = []
_server_ready: list[float] = []


def _timed(label_of, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        label = label_of(args)
        depth = getattr(_active, label, 0)
        setattr(_active, label, depth + 1)
        clock = time.monotonic()
        try:
            return function(*args, **kwargs)
        finally:
            setattr(_active, label, depth)
            if depth == 0:  # the outermost call only: a nested one is in it already
                _totals[label] += time.monotonic() - clock
                _counts[label] += 1

    return wrapper


def _wrap(target: str, label_of) -> bool:
    """Wrap `module:Class.attribute` (a function, method or property) with a timer."""
    module_name, _, path = target.partition(":")
    try:
        owner = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        current = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    except (ImportError, AttributeError, KeyError):
        return False
    if isinstance(current, property):
        setattr(owner, name, property(_timed(label_of, current.fget), current.fset))
    else:
        setattr(owner, name, _timed(label_of, current))
    return True


def _dbt_label(args) -> str:
    command = args[1] if len(args) > 1 else []
    return f"dbt {command[0]}" if command else "dbt"


def _install() -> list[str]:
    missing = []
    timers = {
        # refill's own calls into dbt: timing dbtRunner itself would import dbt before
        # the command does, and so move the temporary server's start
        "refill.warehouse.dbt_runner:DbtProject.manifest": lambda args: "dbt parse",
        "refill.warehouse.dbt_runner:DbtProject.invoke": _dbt_label,
        "refill.rules.readiness:day_readiness": lambda args: "readiness verdicts",
        "refill.warehouse.dbt_runner:DbtProject.code_versions": lambda args: "code versions",
        "flows.prefect_server:TemporaryServer.wait_until_ready": lambda args: "waited for server",
    }
    for target, label_of in timers.items():
        if not _wrap(target, label_of):
            missing.append(target)
    try:
        from flows import prefect_server

        launch = prefect_server.TemporaryServer._launch
        ready = prefect_server.TemporaryServer.wait_until_ready

        def timed_launch(self):
            _server_launched.append(time.monotonic())
            return launch(self)

        def timed_ready(self, *args, **kwargs):
            url = ready(self, *args, **kwargs)
            _server_ready.append(time.monotonic())
            return url

        prefect_server.TemporaryServer._launch = timed_launch
        prefect_server.TemporaryServer.wait_until_ready = functools.wraps(ready)(timed_ready)
    except (ImportError, AttributeError):
        missing.append("flows.prefect_server:TemporaryServer")
    return missing


def main(argv: list[str]) -> None:
    started = time.monotonic()
    report_path, command = Path(argv[0]), argv[argv.index("--") + 1 :]
    from refill import interrupts

    interrupts.stop_at_once_until_armed()
    from refill import cli

    missing = _install()
    sys.argv = ["refill", *command]
    clock = time.monotonic()
    status = cli.main(command, as_program=True)
    phases = {label: round(seconds, 3) for label, seconds in _totals.items()}
    if _server_launched and _server_ready:
        phases["server start (launch to answering)"] = round(
            _server_ready[0] - _server_launched[0], 3
        )
    report = {
        "status": status,
        "command_seconds": round(time.monotonic() - clock, 3),
        "in_process_seconds": round(time.monotonic() - started, 3),
        "phases": phases,
        "calls": dict(_counts),
        "not_timed": missing,
    }
    report_path.write_text(json.dumps(report, indent=2) + "\n")
    interrupts.end_process(status)


if __name__ == "__main__":
    main(sys.argv[1:])
