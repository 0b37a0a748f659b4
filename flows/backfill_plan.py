"""A backfill planned once: its plan (window, options, chunks), the selection resolved and
the code versions it was planned against.

The command line plans while its Prefect server starts (a restatement without --yes is
refused before the run) and hands the plan to the flow; a deployment, which has only
parameters, plans in the flow with the same function. Read-only, no Prefect.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from refill import settings
from refill.errors import RefillError
from refill.rules import planning
from refill.rules.catalog import Dataset
from refill.rules.plan import BackfillPlan, PlanOptions, make_plan
from refill.warehouse import ops, partition_status
from refill.warehouse.dbt_runner import DbtProject, Selection


@dataclass(frozen=True)
class PlannedBackfill:
    plan: BackfillPlan
    selection: Selection
    code_versions: dict[str, str]

    @property
    def window(self) -> planning.DateRange:
        return self.plan.window

    def asked(self, window: planning.DateRange, options: PlanOptions, select: str | None) -> bool:
        """Whether this is the plan of that request (a flow handed a plan checks it)."""
        return (self.window, self.plan.options, self.selection.given) == (window, options, select)

    def parameters(self) -> dict:
        """The run log's record of what the run builds: the plan's request, the selection
        resolved (the selected models and every model below them) and as typed."""
        options = self.plan.options
        return {
            "start": self.window.start,
            "end": self.window.end,
            "order": options.order,
            "chunk_days": options.chunk_days,
            "chunk_lines": options.chunk_lines,
            "restate": options.restate,
            "on_missing": options.on_missing,
            "select": self.selection.models if self.selection.given else None,
            "select_given": self.selection.given,
        }


def plan_backfill(
    project: DbtProject, window: planning.DateRange, select: str | None, options: PlanOptions
) -> PlannedBackfill:
    """Resolve the selection (once: dbt ls), read the days' states and plan the backfill."""
    selection = project.resolve_selection(select)
    current_versions = project.code_versions()
    warehouse = settings.warehouse_path()
    statuses = partition_status.collect(
        warehouse,
        settings.landing_root(),
        window,
        selection.models,
        current_versions,
        project.catalog,
    )
    # What the plan may restate is what readers see now of the datasets it builds: each
    # one's facts, in its own words (a dataset never built has no published totals).
    built = project.catalog.built_by(selection.models)
    totals: dict[Dataset, dict[date, tuple[int, float]]] = dict.fromkeys(built, {})
    if any(status.ledger for status in statuses):
        totals = ops.published_totals(warehouse, built, window.start, window.end)
    plan = make_plan(
        window,
        selection.models,
        states={status.day: status.state for status in statuses},
        landed_lines={status.day: status.readiness.manifest_records or 0 for status in statuses},
        options=options,
        published_totals=totals,
    )
    return PlannedBackfill(plan, selection, current_versions)


def refuse_unsigned_restatement(plan: BackfillPlan) -> None:
    """A plan that changes published numbers needs the --yes sign-off (confirm)."""
    if plan.restated:
        days = ", ".join(str(day) for day in sorted(plan.restated))
        raise RefillError(
            f"the plan restates {len(plan.restated)} published day(s) ({days}); "
            "review them above and rerun with --yes to overwrite, or narrow the range"
        )
