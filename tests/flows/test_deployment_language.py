"""A deployment's run speaks its own language: a refusal ends the run Failed with one line
naming the deployment's parameters (`confirm`), where the command line names its flags."""

from __future__ import annotations

import uuid
from datetime import date

import pytest

from flows.backfill import backfill
from flows.tasks import run_flow
from refill.sample_data import DaySpec, write_days

FIRST = date(2026, 3, 1)


@pytest.mark.usefixtures("prefect_harness")
def test_a_refusal_in_a_deployments_run_names_its_parameters_in_one_line(workspace, monkeypatch):
    # GIVEN two published days
    write_days(workspace.landing, FIRST, 2, DaySpec(payments=40))
    run_flow(backfill, start=FIRST, end=date(2026, 3, 2), retries=1)

    # WHEN a deployment's run restates them without confirm
    monkeypatch.setenv("PREFECT__RUNTIME__DEPLOYMENT__ID", str(uuid.uuid4()))
    state = backfill(start=FIRST, end=date(2026, 3, 2), restate=True, retries=1, return_state=True)

    # THEN the run ends Failed with one line in the deployment's terms
    assert state.is_failed()
    assert "rerun with confirm: true to overwrite" in state.message
    assert "--yes" not in state.message and "\n" not in state.message
