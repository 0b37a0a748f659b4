"""A flow command reports what is wrong with its input before it waits for a Prefect server."""

from __future__ import annotations

import pytest

from flows import prefect_server
from refill.cli import main


@pytest.fixture
def servers(monkeypatch):
    """Record the temporary servers a command starts and waits for (none really starts)."""
    events: list[str] = []

    class FakeServer:
        def __init__(self) -> None:
            events.append("started")

        def wait_until_ready(self) -> str:
            events.append("waited")
            raise AssertionError("the command waited for the Prefect server")

        def stop(self) -> None:
            events.append("stopped")

    monkeypatch.setattr(prefect_server, "TemporaryServer", FakeServer)
    monkeypatch.setattr(prefect_server, "_pending", None)
    monkeypatch.setattr(prefect_server, "configured_api_url", lambda: None)
    return events


def test_a_bad_window_is_reported_before_any_server_starts(workspace, servers, capsys):
    code = main(["backfill", "--start", "2026-01-07", "--end", "2026-01-01"])
    assert code != 0
    assert "refill: error:" in capsys.readouterr().err
    assert servers == []


def test_a_select_typo_is_reported_without_waiting_for_the_server(workspace, servers, capsys):
    code = main(
        ["backfill", "--start", "2026-01-01", "--end", "2026-01-07", "--select", "fct_paymnts"]
    )
    error = capsys.readouterr().err
    assert code == 2  # a usage error
    assert "fct_paymnts" in error and error.count("\n") == 1
    assert "waited" not in servers


@pytest.mark.usefixtures("prefect_harness")
def test_a_restatement_without_yes_is_refused_after_its_plan_without_waiting_for_the_server(
    workspace, servers, capsys
):
    from datetime import date

    from flows.backfill import backfill
    from flows.tasks import run_flow
    from refill.sample_data import DaySpec, write_days

    # GIVEN two published days
    first = date(2026, 3, 1)
    write_days(workspace.landing, first, 2, DaySpec(payments=40))
    run_flow(backfill, start=first, end=date(2026, 3, 2), retries=1)
    # WHEN they are restated without --yes
    code = main(["backfill", "--start", "2026-03-01", "--end", "2026-03-02", "--restate"])

    # THEN the plan is printed, then the refusal, and the server was never waited for
    captured = capsys.readouterr()
    assert code == 1
    assert "restates 2 published day(s)" in captured.out  # the plan, to review
    assert "rerun with --yes" in captured.err and captured.err.count("\n") == 1
    assert "waited" not in servers


def test_the_temporary_server_takes_the_runs_last_log_lines_before_it_stops(monkeypatch):
    # GIVEN a command's temporary server, still running at the command's end
    from prefect.logging.handlers import APILogWorker

    events = []

    class Running:
        pid = 0

        def poll(self):
            return None

    server = prefect_server.TemporaryServer.__new__(prefect_server.TemporaryServer)
    server.process = Running()
    monkeypatch.setattr(APILogWorker, "drain_all", lambda timeout=None: events.append("drain"))
    monkeypatch.setattr(server, "stop", lambda: events.append("stop"))

    # WHEN the command exits (the atexit hook the server registers)
    server.stop_after_the_logs()

    # THEN the log lines are sent while the server can take them, and only then it stops
    # (stopped first, Python's logging shutdown waited out Prefect's 5 s drain: 5.0 s of
    # every cold command's exit)
    assert events == ["drain", "stop"]


def test_flows_on_the_temporary_server_send_no_heartbeats(monkeypatch):
    # GIVEN a command's temporary server, answering
    from prefect.settings import get_current_settings

    class Answering:
        api_url = "http://127.0.0.1:9/api"

        def wait_until_ready(self) -> str:
            return self.api_url

    monkeypatch.setattr(prefect_server, "_pending", Answering())

    # WHEN the command's flows run
    with prefect_server.api_for_flows():
        settings = get_current_settings()

    # THEN they talk to that server and send it no heartbeats: it lives exactly as long as
    # the process, so nobody can watch for their absence, and each flow's end waited for the
    # heartbeat thread's sleep (0.59 s of a cold `refill daily`); a lasting server (an
    # API configured, a deployment's worker) keeps Prefect's heartbeats
    assert settings.api.url == Answering.api_url
    assert settings.flows.heartbeat_frequency is None
    assert get_current_settings().flows.heartbeat_frequency is not None
