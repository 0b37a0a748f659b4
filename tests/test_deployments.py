"""Every deployment in prefect.yaml loads its entrypoint and its parameters fit the flow."""

from __future__ import annotations

import pytest
import yaml
from prefect.flows import load_flow_from_entrypoint

from flows.settings import PACKAGE_PROJECT_DIR as PROJECT_DIR

DEPLOYMENTS = yaml.safe_load((PROJECT_DIR / "prefect.yaml").read_text())["deployments"]


@pytest.mark.parametrize("deployment", DEPLOYMENTS, ids=[d["name"] for d in DEPLOYMENTS])
def test_each_deployment_loads_and_its_parameters_validate(deployment):
    flow = load_flow_from_entrypoint(str(PROJECT_DIR / deployment["entrypoint"]))

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
    daily = next(d for d in DEPLOYMENTS if d["name"] == "daily")
    assert daily["schedules"][0]["cron"] == "0 3 * * *"
    assert daily["parameters"]["wait_for_ready_seconds"] == 3 * 3600


def test_the_backfill_deployment_asks_before_restating():
    backfill = next(d for d in DEPLOYMENTS if d["name"] == "backfill")
    assert backfill["parameters"]["confirm"] is False
    assert "start" not in backfill["parameters"] and "end" not in backfill["parameters"]
