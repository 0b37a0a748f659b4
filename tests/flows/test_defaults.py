"""One home for defaults: prefect.yaml's parameters, the flows' own defaults and the command
line's all read refill/settings.py, so a default changed there changes everywhere."""

from __future__ import annotations

import inspect

import pytest
import yaml

from flows.backfill import backfill
from flows.daily import daily
from refill import settings
from refill.cli import build_parser
from refill.settings import PACKAGE_PROJECT_DIR

DEPLOYMENTS = {
    deployment["name"]: deployment
    for deployment in yaml.safe_load((PACKAGE_PROJECT_DIR / "prefect.yaml").read_text())[
        "deployments"
    ]
}
DELAYS = list(settings.RETRY_DELAY_SECONDS)


def test_prefect_yaml_s_parameters_are_the_settings():
    assert DEPLOYMENTS["daily"]["parameters"] == {
        "wait_for_ready_seconds": settings.READY_WAIT_SECONDS,
        "poll_seconds": settings.READY_POLL_SECONDS,
        "retries": settings.RETRIES,
        "retry_delay_seconds": DELAYS,
    }
    assert DEPLOYMENTS["backfill"]["parameters"] == {
        "order": settings.BACKFILL_ORDER,
        "chunk_days": settings.CHUNK_DAYS,
        "chunk_lines": settings.CHUNK_LINES,
        "on_missing": settings.ON_MISSING,
        "confirm": False,  # restating published days is signed off per run
        "dry_run": False,
        "retries": settings.RETRIES,
        "retry_delay_seconds": DELAYS,
    }


def _defaults(flow) -> dict:
    return {
        name: parameter.default
        for name, parameter in inspect.signature(flow.fn).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }


@pytest.mark.parametrize("name, flow", [("daily", daily), ("backfill", backfill)])
def test_a_deployment_s_parameters_are_its_flow_s_own_defaults(name, flow):
    # a deployment that left a parameter out would run the same: the yaml only says it
    defaults = _defaults(flow)
    for parameter, value in DEPLOYMENTS[name]["parameters"].items():
        expected = defaults[parameter]
        if parameter == "retry_delay_seconds":
            assert expected is None  # the flow's None: the default delays, which are these
            expected = DELAYS
        assert value == expected, parameter


def test_the_flows_defaults_are_the_settings():
    assert _defaults(daily) == {
        "logical_date": None,
        "wait_for_ready_seconds": settings.READY_WAIT_SECONDS,
        "poll_seconds": settings.READY_POLL_SECONDS,
        "lock_wait_seconds": settings.DAILY_LOCK_WAIT_SECONDS,
        "retries": settings.RETRIES,
        "retry_delay_seconds": None,
        "confirm": False,
        "command_line": "refill daily (deployment)",
    }
    backfill_defaults = _defaults(backfill)
    assert {
        "order": settings.BACKFILL_ORDER,
        "chunk_days": settings.CHUNK_DAYS,
        "chunk_lines": settings.CHUNK_LINES,
        "on_missing": settings.ON_MISSING,
        "retries": settings.RETRIES,
        "wait_for_late_seconds": settings.READY_WAIT_SECONDS,
        "poll_seconds": settings.READY_POLL_SECONDS,
        "lock_wait_seconds": settings.BACKFILL_LOCK_WAIT_SECONDS,
    }.items() <= backfill_defaults.items()


def _command_defaults(command: str) -> dict:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    # as `refill <command> --help` shows them: board's and cutover's options are added only
    # when their command is parsed or its help shown (refill/cli/parser.py, OneLineParser)
    commands[command].format_help()
    return {action.dest: action.default for action in commands[command]._actions}


def test_the_command_line_s_defaults_are_the_settings():
    daily_options = _command_defaults("daily")
    backfill_options = _command_defaults("backfill")
    gaps_options = _command_defaults("gaps")

    # the same as a deployment's, but for the one default that differs by who starts it
    assert daily_options["wait"] == settings.DAILY_BY_HAND_WAIT_SECONDS
    assert daily_options["poll"] == settings.READY_POLL_SECONDS
    assert daily_options["lock_wait"] == settings.DAILY_LOCK_WAIT_SECONDS
    for options in (daily_options, backfill_options, gaps_options):
        assert options["retries"] == settings.RETRIES
        assert options["retry_delay"] == DELAYS
    for options in (backfill_options, gaps_options):  # gaps --fix runs a backfill
        assert options["chunk_days"] == settings.CHUNK_DAYS
        assert options["chunk_lines"] == settings.CHUNK_LINES
        assert options["lock_wait"] == settings.BACKFILL_LOCK_WAIT_SECONDS
    assert backfill_options["order"] == settings.BACKFILL_ORDER
    assert backfill_options["on_missing"] == settings.ON_MISSING
    assert backfill_options["wait"] == settings.READY_WAIT_SECONDS
    assert backfill_options["poll"] == settings.READY_POLL_SECONDS
    assert gaps_options["min_hole_hours"] == settings.MIN_HOLE_HOURS
    assert _command_defaults("board")["port"] == settings.BOARD_PORT
    assert _command_defaults("cutover")["lock_wait"] == settings.COMMAND_LOCK_WAIT_SECONDS
