"""The artifacts a run publishes in the Prefect UI: the partition board beside the run.

The board's markdown is the view's (refill.views.board.markdown); publishing it is the only
Prefect code here."""

from __future__ import annotations

import logging

from prefect import get_run_logger
from prefect.artifacts import create_markdown_artifact

from refill.rules import planning
from refill.views import board
from refill.warehouse.dbt_runner import shared_project
from refill.warehouse.partition_status import DayStatus

log = logging.getLogger("refill.board")


def publish_board(
    window: planning.DateRange,
    key: str = "refill-board",
    description: str | None = None,
    statuses: list[DayStatus] | None = None,
):
    """Publish the board of `window` as a markdown artifact of the current Prefect run
    (drawn from `statuses` when the caller holds the days' statuses as they are now).

    Never fails the run: the picture of a run is not worth failing the run it shows.
    Returns the artifact's id, or None when it could not be made (logged as a warning).
    """
    try:
        markdown = board.artifact_markdown(shared_project(), window, statuses=statuses)
        return create_markdown_artifact(
            markdown=markdown, key=key, description=description or f"refill board {window}"
        )
    except Exception as error:  # any failure here is reported, never raised
        _run_logger().warning("the board artifact for %s was not published: %s", window, error)
        return None


def _run_logger():
    try:
        return get_run_logger()
    except Exception:  # outside a flow run: the module's logger
        return log
