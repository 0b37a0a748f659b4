"""Every value a command line option or a deployment parameter carries, checked at one home
before anything runs: a value no data can make right is refused in one line naming the
option, as a usage error (exit 2 on the command line; a deployment's run fails with the
same line before it plans).

The command line checks its parsed options here (`check(vars(args))`, refill/cli/__init__.py) before
it starts a server or opens the warehouse; the flows check their parameters here first
(flows/daily.py, flows/backfill.py), so a deployment's parameters (prefect.yaml, or given to
a run) meet the same rules. One table, `OPTIONS`, names each option's flag, the names its
value goes by (argparse's dest, the flows' parameter) and its rule.

What needs the dbt project or the warehouse to judge (a --select, a preview id's record) is
judged where they are read; what two options say together (a preview and its publish) in
refill.rules.preview and refill/cli/preview.py.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from refill import code_version, settings
from refill.errors import RefillError, UsageError
from refill.rules import planning
from refill.rules.preview import parse_expected_range

PORTS = range(0, 65536)


def _number(flag: str, value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(f"{flag} must be {what}, got {value!r}")
    if not math.isfinite(value):
        raise UsageError(f"{flag} must be {what}, got {value!r}")
    return value


def seconds(flag: str, value: object) -> None:
    """A wait: a finite number of seconds, 0 or more."""
    if _number(flag, value, "a number of seconds >= 0") < 0:
        raise UsageError(f"{flag} must be a number of seconds >= 0, got {value!r}")


def poll_seconds(flag: str, value: object) -> None:
    """A pause between checks: more than 0 (0 would check the landing without a pause)."""
    if _number(flag, value, "a number of seconds > 0") <= 0:
        raise UsageError(f"{flag} must be a number of seconds > 0, got {value!r}")


def delays(flag: str, value: object) -> None:
    """Pauses between attempts: at least one, each a finite number of seconds >= 0."""
    if not isinstance(value, list | tuple) or not value:
        raise UsageError(f"{flag} must be one or more seconds, comma-separated, got {value!r}")
    for each in value:
        if _number(flag, each, "seconds >= 0, comma-separated") < 0:
            raise UsageError(f"{flag} must be seconds >= 0, comma-separated, got {value!r}")


def at_least(minimum: int, what: str) -> Callable[[str, object], None]:
    def check(flag: str, value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise UsageError(f"{flag} must be {what}, got {value!r}")

    return check


def choice(choices: tuple[str, ...]) -> Callable[[str, object], None]:
    def check(flag: str, value: object) -> None:
        if value not in choices:
            raise UsageError(f"{flag} {value!r} is not one of {', '.join(choices)}")

    return check


def port(flag: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value not in PORTS:
        raise UsageError(f"{flag} must be a port, 0 (any free one) to 65535, got {value!r}")


def expected_range(flag: str, value: object) -> None:
    try:
        parse_expected_range(str(value))
    except RefillError as error:
        raise UsageError(str(error)) from None


def writable_folder(flag: str, folder: Path) -> None:
    """A folder refill writes into: an existing folder, or one it can create (its nearest
    existing parent a folder it may write in)."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing == folder and not folder.is_dir():
        raise UsageError(f"{flag} {folder} is a file, not a folder; name a folder")
    if not existing.is_dir():
        raise UsageError(f"{flag} {folder} cannot be a folder: {existing} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {folder}: cannot write in {existing} (permission denied)")


def report_dir(flag: str, value: object) -> None:
    writable_folder(flag, settings.preview_report_dir(str(value)))


def output_file(flag: str, value: object) -> None:
    """A file refill writes: not a folder, in a folder it can create."""
    path = Path(str(value))
    if path.is_dir():
        raise UsageError(f"{flag} {path} is a folder; name the file to write")
    writable_folder(flag, path.parent if str(path.parent) else Path("."))


def git_ref(flag: str, value: object) -> None:
    """A ref of the project's git repository that names a commit (`refill ci --base`)."""
    try:
        code_version.resolve_ref(settings.project_dir(), str(value))
    except RefillError as error:
        raise UsageError(f"{flag}: {error}") from None


@dataclass(frozen=True)
class Option:
    flag: str  # the command line's name, the one the message says
    names: tuple[str, ...]  # argparse's dest and the flows' parameter names
    check: Callable[[str, object], None]


OPTIONS = (
    Option("--lock-wait", ("lock_wait", "lock_wait_seconds"), seconds),
    Option("--wait", ("wait", "wait_for_ready_seconds", "wait_for_late_seconds"), seconds),
    Option("--poll", ("poll", "poll_seconds"), poll_seconds),
    Option("--retries", ("retries",), at_least(1, "a whole number of attempts >= 1")),
    Option("--retry-delay", ("retry_delay", "retry_delay_seconds"), delays),
    Option("--chunk-days", ("chunk_days",), at_least(1, "a whole number of days >= 1")),
    Option("--chunk-lines", ("chunk_lines",), at_least(0, "a whole number >= 0 (0: no limit)")),
    Option("--max-concurrency", ("max_concurrency",), at_least(1, "a whole number >= 1")),
    Option("--min-hole-hours", ("min_hole_hours",), at_least(1, "a whole number of hours >= 1")),
    Option("--order", ("order",), choice(planning.ORDERS)),
    Option("--on-missing", ("on_missing",), choice(planning.ON_MISSING)),
    Option("--port", ("port",), port),
    Option("--out", ("out",), output_file),
    Option("--expect-change", ("expect_change",), expected_range),
    Option("--report-dir", ("report_dir",), report_dir),
    Option("--report", ("report",), output_file),
    Option("--base", ("base",), git_ref),
)


# The command line's flags as a deployment's parameters (prefect.yaml) name them: the one
# vocabulary of both. Messages are written with the flags; a run started by a deployment
# says them in its parameters' names (in_deployment_terms, at the flows' one exit).
PARAMETERS = {
    "--yes": "confirm: true",
    "--from-preview": "confirm: <preview id>",
    "--start": "start",
    "--end": "end",
    "--dry-run": "dry_run: true",
    "--preview": "preview: true",
    "--restate": "restate: true",
    "--wait": "wait_for_ready_seconds (daily) / wait_for_late_seconds (backfill)",
    **{option.flag: option.names[-1] for option in OPTIONS if option.flag != "--wait"},
}
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def in_deployment_terms(message: str) -> str:
    """`message` with every command-line flag it names said as the deployment parameter that
    carries the same value (`--yes` -> `confirm: true`, `--start` -> `start`); a flag with no
    parameter keeps its name."""
    return _FLAG.sub(lambda flag: PARAMETERS.get(flag.group(0), flag.group(0)), message)


def check(values: Mapping[str, object]) -> None:
    """Refuse, in one line (UsageError), the first value of `values` (argparse's namespace
    as a dict, or a flow's parameters) that breaks its option's rule. A value left out or
    None is the default, which is valid. A preview checks where its report will go even
    when --report-dir is not given ($REFILL_PREVIEWS, or the default folder)."""
    for option in OPTIONS:
        for name in option.names:
            value = values.get(name)
            if value is not None:
                option.check(option.flag, value)
    if values.get("preview") is True and values.get("report_dir") is None:
        source = "REFILL_PREVIEWS" if os.environ.get("REFILL_PREVIEWS") else "the report folder"
        writable_folder(source, settings.preview_report_dir(None))


def check_days_in_window(days: list[date] | None, window: planning.DateRange) -> None:
    """A backfill's `only_days` (gaps --fix, or a deployment's parameter) lie in its window."""
    outside = sorted(day for day in days or () if not window.start <= day <= window.end)
    if outside:
        shown = ", ".join(str(day) for day in outside)
        raise UsageError(f"only_days {shown} outside the window {window}")
