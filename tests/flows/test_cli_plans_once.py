"""A command is planned once: `refill backfill` resolves its selection (dbt ls) and reads
the days' states for its plan once, and the run builds the plan the command printed
(a deployment, with only parameters, plans in the flow with the same function)."""

from __future__ import annotations

import sys
from datetime import date, timedelta

import pytest

from refill.cli import main
from refill.errors import EXIT_OK
from refill.sample_data import write_days
from refill.warehouse import partition_status
from refill.warehouse.dbt_runner import DbtProject
from tests.helpers import query
from tests.runs import run_backfill

# The session's Prefect server, as every test that runs a flow in this process: without it
# the command starts a temporary server of its own, and Prefect's events worker (one per
# process) stays pointed at it once it stops; the session's teardown then waited on
# events sent to a server that is gone.
pytestmark = pytest.mark.usefixtures("prefect_harness")

D1 = date(2026, 3, 1)


def _counted(monkeypatch) -> dict[str, int]:
    counts = {"dbt ls": 0, "plan reads": 0}
    invoke, collect = DbtProject.invoke, partition_status.collect

    def counting_invoke(self, args, *more, **keywords):
        counts["dbt ls"] += args[:1] == ["ls"]
        return invoke(self, args, *more, **keywords)

    def counting_collect(*args, **keywords):
        # a plan's read, not the board's (the run's artifact reads the days for its page)
        caller = sys._getframe(1).f_globals["__name__"]
        counts["plan reads"] += not caller.startswith("refill.views.")
        return collect(*args, **keywords)

    monkeypatch.setattr(DbtProject, "invoke", counting_invoke)
    monkeypatch.setattr(partition_status, "collect", counting_collect)
    return counts


def test_a_backfill_with_a_selection_resolves_it_and_plans_once(workspace, monkeypatch, capsys):
    write_days(workspace.landing, D1, 2)
    counts = _counted(monkeypatch)
    argv = ["backfill", "--start", "2026-03-01", "--end", "2026-03-02", "--retries", "1"]

    assert main([*argv, "--select", "fct_payments"]) == EXIT_OK

    assert counts == {"dbt ls": 1, "plan reads": 1}
    assert "published 2 day(s)" in capsys.readouterr().out
    published = query(
        workspace.warehouse,
        "select count(distinct partition_date) from ops.partition_ledger "
        "where model_name = 'fct_payments'",
    )
    assert published == [(2,)]


def test_a_dry_run_prints_the_plan_it_made_once(workspace, monkeypatch, capsys):
    write_days(workspace.landing, D1, 2)
    counts = _counted(monkeypatch)

    argv = ["backfill", "--start", "2026-03-01", "--end", "2026-03-02", "--dry-run"]
    assert main(argv) == EXIT_OK

    assert counts == {"dbt ls": 0, "plan reads": 1}  # no --select: nothing for dbt ls
    out = capsys.readouterr().out
    assert "2 day(s) to build in 1 chunk(s)" in out and "dry run, nothing written" in out
    assert not workspace.warehouse.exists()


def test_a_run_handed_the_plan_of_another_request_refuses_it(workspace):
    from flows.backfill_plan import plan_backfill
    from refill.errors import RefillError
    from refill.rules.plan import PlanOptions
    from refill.rules.planning import DateRange
    from refill.warehouse.dbt_runner import shared_project

    write_days(workspace.landing, D1, 2)
    planned = plan_backfill(shared_project(), DateRange(D1, D1), None, PlanOptions())
    with pytest.raises(RefillError, match=r"is not the plan of its parameters"):
        run_backfill(start=D1, end=D1 + timedelta(days=1), planned=planned)
    # a deployment's run given something else as `planned` refuses it the same way
    with pytest.raises(RefillError, match=r"is not the plan of its parameters"):
        run_backfill(start=D1, end=D1, planned={"plan": "every day"})
    assert not workspace.warehouse.exists()
