"""Property: any value of every command line option and deployment parameter is honoured
(the flow gets exactly that value) or refused with exit 2 and one line, before anything is
built: the warehouse file is never created by a refusal.

The oracle is each option's domain written here from the help text, apart from refill's
code: a whole number of attempts >= 1, seconds >= 0 (a poll > 0), finite, a port, a folder
refill can write in, ... The flows' parameters (a deployment's, prefect.yaml's defaults
under them) meet the same rules: refused in one line (UsageError) before the run plans."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pytest
import yaml
from hypothesis import event, given
from hypothesis import strategies as st
from prefect.flows import load_flow_from_entrypoint

from refill import options, settings
from refill.cli import main
from refill.errors import EXIT_USAGE, RefillError, UsageError

pytestmark = pytest.mark.usefixtures("prefect_harness")

NUMBER_TEXT = st.one_of(
    st.integers(-3, 70_000).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", "x", "1,5", "0x10", "1_000", " 3", "+2", "-0", "1e3", "0.5"]),
)
DELAY_TEXT = st.lists(NUMBER_TEXT, min_size=0, max_size=3).map(",".join)
PATH_KINDS = ("a folder", "new under a folder", "a file", "under a file")


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def seconds(text, positive=False):
    value = _float(text)
    ok = value is not None and math.isfinite(value) and (value > 0 if positive else value >= 0)
    return ok, value


def whole(minimum, maximum=None):
    def domain(text):
        value = _int(text)
        ok = value is not None and value >= minimum and (maximum is None or value <= maximum)
        return ok, value

    return domain


def delays(text):
    parts = [_float(part) for part in text.split(",") if part.strip()]
    ok = bool(parts) and all(p is not None and math.isfinite(p) and p >= 0 for p in parts)
    return ok, parts


def choice(*choices):
    return lambda text: (text in choices, text)


def expected_range(text):
    start, separator, end = text.partition("..")
    try:
        ok = bool(separator) and date.fromisoformat(start) <= date.fromisoformat(end)
    except ValueError:
        ok = False
    return ok, text


# (flag, the flow parameter it becomes, its domain, the values to draw)
COMMON = {
    "--lock-wait": ("lock_wait_seconds", seconds, NUMBER_TEXT),
    "--retries": ("retries", whole(1), NUMBER_TEXT),
    "--retry-delay": ("retry_delay_seconds", delays, DELAY_TEXT),
}
COMMANDS = {
    "daily": (
        ["daily", "--date", "2026-01-05"],
        {
            **COMMON,
            "--wait": ("wait_for_ready_seconds", seconds, NUMBER_TEXT),
            "--poll": ("poll_seconds", lambda t: seconds(t, positive=True), NUMBER_TEXT),
        },
    ),
    "backfill": (
        ["backfill", "--start", "2026-01-05", "--end", "2026-01-06", "--preview"],
        {
            **COMMON,
            "--wait": ("wait_for_late_seconds", seconds, NUMBER_TEXT),
            "--poll": ("poll_seconds", lambda t: seconds(t, positive=True), NUMBER_TEXT),
            "--chunk-days": ("chunk_days", whole(1), NUMBER_TEXT),
            "--chunk-lines": ("chunk_lines", whole(0), NUMBER_TEXT),
            "--max-concurrency": ("max_concurrency", whole(1), NUMBER_TEXT),
            "--order": (
                "order",
                choice("newest-first", "oldest-first"),
                st.sampled_from(["newest-first", "oldest-first", "sideways", ""]),
            ),
            "--on-missing": (
                "on_missing",
                choice("fail", "skip", "wait"),
                st.sampled_from(["fail", "skip", "wait", "ignore"]),
            ),
            "--expect-change": (
                "expect_change",
                expected_range,
                st.sampled_from(
                    ["2026-01-05..2026-01-06", "2026-01-06..2026-01-05", "2026-01-05", "x..y"]
                ),
            ),
            "--report-dir": ("report_dir", None, st.sampled_from(PATH_KINDS)),
        },
    ),
    "gaps": (
        ["gaps", "--start", "2026-01-05", "--end", "2026-01-06"],
        {
            **COMMON,
            "--min-hole-hours": ("min_hole_hours", whole(1), NUMBER_TEXT),
            "--chunk-days": ("chunk_days", whole(1), NUMBER_TEXT),
            "--chunk-lines": ("chunk_lines", whole(0), NUMBER_TEXT),
        },
    ),
    "cutover": (
        ["cutover", "fct_daily_revenue", "--to", "2"],
        {"--lock-wait": ("lock_wait_seconds", seconds, NUMBER_TEXT)},
    ),
    "board": (
        ["board", "--start", "2026-01-05", "--end", "2026-01-06"],
        {
            "--lock-wait": ("lock_wait_seconds", seconds, NUMBER_TEXT),
            "--port": ("port", whole(0, 65535), NUMBER_TEXT),
            "--out": ("out", None, st.sampled_from(PATH_KINDS)),
        },
    ),
}


class Honoured(BaseException):
    """The command reached its flow: these are the parameters it passed."""

    def __init__(self, parameters: dict):
        super().__init__()
        self.parameters = parameters


def a_path(folder: Path, kind: str, flag: str) -> tuple[bool, str]:
    """A path of `kind` under `folder`, and whether refill may write there: a report
    folder (--report-dir) is a folder or one it can create; a page (--out) is a file, new
    or not, in a folder it can create."""
    (folder / "a-folder").mkdir(exist_ok=True)
    (folder / "a-file").write_text("not a folder")
    path = {
        "a folder": folder / "a-folder",
        "new under a folder": folder / "a-folder" / "new" / "leaf",
        "a file": folder / "a-file",
        "under a file": folder / "a-file" / "leaf",
    }[kind]
    writable = ("a folder", "new under a folder")
    if flag == "--out":
        writable = ("new under a folder", "a file")
    return kind in writable, str(path)


@st.composite
def command_lines(draw):
    name = draw(st.sampled_from(sorted(COMMANDS)))
    base, table = COMMANDS[name]
    flags = draw(st.sets(st.sampled_from(sorted(table)), min_size=1, max_size=3))
    return name, base, {flag: draw(table[flag][2]) for flag in sorted(flags)}


@given(line=command_lines())
def test_every_option_value_is_honoured_or_refused_in_one_line_before_anything_runs(
    tmp_path, monkeypatch, capsys, line
):
    from prefect.settings import PREFECT_API_URL

    name, base, values = line
    table = COMMANDS[name][1]
    warehouse = tmp_path / "warehouse" / "refill.duckdb"
    monkeypatch.setenv("REFILL_WAREHOUSE", str(warehouse))
    monkeypatch.setenv("REFILL_LANDING", str(tmp_path / "landing"))
    monkeypatch.setenv("PREFECT_API_URL", PREFECT_API_URL.value())

    def reached(flow, **parameters):
        raise Honoured(parameters)

    monkeypatch.setattr("flows.tasks.run_flow", reached)
    argv, valid, parsed = list(base), True, {}
    for flag, text in values.items():
        parameter, domain, _ = table[flag]
        if domain is None:  # a path of a kind
            ok, text = a_path(tmp_path, text, flag)
            value = text
        else:
            ok, value = domain(text)
        valid &= ok
        parsed[parameter] = value
        argv.append(f"{flag}={text}")
    if name == "gaps":
        argv.append("--fix")
    capsys.readouterr()

    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code
    except Honoured as flow:
        # THEN a value in its domain reaches the flow as given
        event(f"{name}: honoured")
        assert valid, (argv, "accepted")
        for parameter, value in parsed.items():
            if parameter in flow.parameters:
                assert flow.parameters[parameter] == value, (argv, parameter)
        return
    error = capsys.readouterr().err.strip()
    event(f"{name}: exit {status}")
    if status == EXIT_USAGE:
        # THEN a value out of its domain is refused: one line, exit 2, nothing created
        assert not valid, (argv, error)
        assert error.startswith("refill: error:") and "\n" not in error, (argv, error)
    else:
        # a command that read a missing warehouse (status, gaps, cutover, board): the
        # options were accepted, the data is what failed
        assert valid, (argv, status, error)
    assert not warehouse.exists(), argv


# -- deployments ---------------------------------------------------------------------------

NUMBERS = st.one_of(
    st.none(), st.integers(-3, 10), st.floats(allow_nan=True, allow_infinity=True), st.just("x")
)
DEPLOYMENT_VALUES = {  # by the kind of parameter: numbers, lists of seconds, choices
    "retry_delay_seconds": st.one_of(
        st.none(), st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=2)
    ),
    "order": st.sampled_from([None, "newest-first", "oldest-first", "", "sideways"]),
    "on_missing": st.sampled_from([None, "fail", "skip", "wait", "ignore"]),
}
PARAMETERS = {
    "backfill": {
        "lock_wait_seconds": lambda v: _number_ok(v, 0),
        "retries": lambda v: _whole_ok(v, 1),
        "retry_delay_seconds": lambda v: (
            v is None
            or (
                isinstance(v, list)
                and bool(v)
                and all(_number_ok(x, 0) and x is not None for x in v)
            )
        ),
        "poll_seconds": lambda v: _number_ok(v, 0, strict=True),
        "wait_for_late_seconds": lambda v: _number_ok(v, 0),
        "chunk_days": lambda v: _whole_ok(v, 1),
        "chunk_lines": lambda v: _whole_ok(v, 0),
        "max_concurrency": lambda v: _whole_ok(v, 1),
        "order": lambda v: v in (None, "newest-first", "oldest-first"),
        "on_missing": lambda v: v in (None, "fail", "skip", "wait"),
    },
    "daily": {
        "lock_wait_seconds": lambda v: _number_ok(v, 0),
        "retries": lambda v: _whole_ok(v, 1),
        "poll_seconds": lambda v: _number_ok(v, 0, strict=True),
        "wait_for_ready_seconds": lambda v: _number_ok(v, 0),
    },
}


def _number_ok(value, minimum, strict=False) -> bool:
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and (value > minimum if strict else value >= minimum)


def _whole_ok(value, minimum) -> bool:
    if value is None:
        return True
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def deployment(name: str):
    deployments = yaml.safe_load((settings.PACKAGE_PROJECT_DIR / "prefect.yaml").read_text())
    found = next(d for d in deployments["deployments"] if d["name"] == name)
    return load_flow_from_entrypoint(found["entrypoint"]), found["parameters"]


@st.composite
def deployment_runs(draw):
    name = draw(st.sampled_from(sorted(PARAMETERS)))
    names = draw(st.sets(st.sampled_from(sorted(PARAMETERS[name])), min_size=1, max_size=3))
    return name, {
        parameter: draw(DEPLOYMENT_VALUES.get(parameter, NUMBERS)) for parameter in sorted(names)
    }


@given(run=deployment_runs())
def test_every_deployment_parameter_is_honoured_or_refused_in_one_line(tmp_path, monkeypatch, run):
    from flows.tasks import run_flow

    name, given_values = run
    flow, defaults = deployment(name)
    warehouse = tmp_path / "warehouse" / "refill.duckdb"
    monkeypatch.setenv("REFILL_WAREHOUSE", str(warehouse))
    monkeypatch.setenv("REFILL_LANDING", str(tmp_path / "landing"))
    window = {"start": "2026-01-05", "end": "2026-01-06", "dry_run": True}
    asked = {**defaults, **(window if name == "backfill" else {}), **given_values}
    # None stands for "not given": the flow's own default
    asked = {key: value for key, value in asked.items() if value is not None}
    try:
        # the server validates a run's parameters against the flow's signature first
        validated = flow.validate_parameters(asked)
    except Exception:  # noqa: BLE001 (pydantic's refusal: the run never starts)
        event(f"{name}: refused by the flow's signature")
        assert not warehouse.exists()
        return
    valid = all(PARAMETERS[name][key](validated.get(key)) for key in given_values)
    if name == "daily" and valid:
        # a daily run that is honoured builds; here its values are only checked
        event("daily: honoured (checked, not run)")
        options.check(validated)
        return
    try:
        run_flow(flow, **validated)
    except UsageError as refused:
        event(f"{name}: refused in one line")
        assert not valid, (given_values, str(refused))
        assert "\n" not in str(refused)
    except RefillError as failed:  # a data failure after the options were accepted
        assert valid, (given_values, str(failed))
    else:
        event(f"{name}: honoured")
        assert valid, given_values
    assert not warehouse.exists()
