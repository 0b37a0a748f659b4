"""What the daily run and the backfill share: the life of a run (written once) and the
groups their parameters form (retries, a wait for an export).

A run's life: prepare the warehouse, hold the run's liveness, record its start; the flow
builds; its end is recorded on every path (succeeded by the flow, failed or not ready by
`accounted_run`, interrupted here), with its notification queued and delivered; then the
board artifact beside the run.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prefect import get_run_logger

from flows.tasks import (
    RunAccount,
    accounted_run,
    build_window,
    prepare_warehouse,
    publish_board,
)
from refill import interrupts, settings
from refill.rules import planning
from refill.warehouse import run_liveness
from refill.warehouse.dbt_runner import DbtProject


@dataclass(frozen=True)
class Retries:
    """Attempts per build and the pauses between them (--retries, --retry-delay). Prefect
    runs them (declared on the task); only a transient failure is retried."""

    attempts: int = settings.RETRIES
    delays: tuple[float, ...] = settings.RETRY_DELAY_SECONDS

    @classmethod
    def of(cls, retries: int, retry_delay_seconds: list[float] | None) -> Retries:
        """From a flow's parameters (no delays given: the default delays)."""
        if retry_delay_seconds is None:
            return cls(retries)
        return cls(retries, tuple(retry_delay_seconds))

    @property
    def at_least_one(self) -> int:
        """The attempts a failed build made (its attempt row's number)."""
        return max(self.attempts, 1)

    def builder(self):
        """build_window with these retries."""
        return build_window.with_options(
            retries=max(self.attempts - 1, 0), retry_delay_seconds=list(self.delays)
        )


@dataclass(frozen=True)
class ReadyWait:
    """How long a run waits for a day's export, and how often it checks the landing."""

    seconds: float = settings.READY_WAIT_SECONDS
    poll_seconds: float = settings.READY_POLL_SECONDS

    def deadline(self) -> float:
        return time.monotonic() + self.seconds

    def pause(self, deadline: float, where: str) -> None:
        """Sleep until the next check (never past the deadline); a first Ctrl-C ends the
        sleep at once: nothing is being written."""
        with interrupts.interruptible(where):
            time.sleep(min(self.poll_seconds, max(deadline - time.monotonic(), 0.0)))


@dataclass(frozen=True)
class RunEnding:
    """How one kind of run ends besides success: what its run log and the command say when
    it is interrupted, and where its board artifact goes."""

    interrupted_message: Callable[[interrupts.Interrupted], str]  # the run log's line
    resume_advice: str  # added to the command's line ("" when the message says it)
    board_window: planning.DateRange
    board_key: str
    board_on_every_outcome: bool  # False: only beside a run that succeeded


@contextlib.contextmanager
def recorded_run(
    project: DbtProject, account: RunAccount, ending: RunEnding
) -> Iterator[RunAccount]:
    """The life of one run around the flow's build (the block): see the module's docstring.

    The block closes the run `succeeded` (account.close) when it is done; a failure it
    raises is closed by `accounted_run`; an interrupt (a first Ctrl-C or SIGTERM, at a
    safe point) is closed `interrupted` here and raised again with its one line."""
    succeeded = False
    try:
        with accounted_run(account):
            prepare_warehouse(project, account.context)
            # before the run log says `running`
            run_liveness.hold(settings.warehouse_path(), account.context.run_id)
            account.start()
            try:
                yield account
            except interrupts.Interrupted as stop:
                raise _close_interrupted(account, ending, stop) from None
        succeeded = True
    finally:
        if succeeded or ending.board_on_every_outcome:
            publish_board(ending.board_window, key=ending.board_key)


def _close_interrupted(
    account: RunAccount, ending: RunEnding, stop: interrupts.Interrupted
) -> interrupts.Interrupted:
    """Close the run log as interrupted: what the run committed before the stop stands."""
    message = ending.interrupted_message(stop)
    get_run_logger().warning(message)
    account.close("interrupted", message, failure="interrupted")
    return interrupts.Interrupted(
        f"{message}. {ending.resume_advice}" if ending.resume_advice else message
    )
