"""Ctrl-C and SIGTERM where Prefect runs the flows: refill.interrupts' handlers (the first
signal stops at a safe point, the second at once) kept in force inside Prefect's flow
engine, and an interrupted flow run ending Cancelled.

Only the `refill` command arms them (`arm`). A deployment run on a worker keeps Prefect's
own SIGTERM handling (the worker's cancel).
"""

from __future__ import annotations

import functools

from refill import interrupts


def arm() -> None:
    """Arm refill's handlers for a command that runs flows (main thread only), and route
    Prefect's SIGTERM bridge to them."""
    interrupts.arm()
    _route_prefects_sigterm_bridge_here()


def _route_prefects_sigterm_bridge_here() -> None:
    """Prefect's flow engine installs its own SIGTERM handler around a flow run, which
    raises TerminationSignal: the run crashes and the command exits 1. `end_as_cancelled`
    takes SIGTERM back for the flow's body, but a SIGTERM can land while the engine starts
    or ends the run (seen by the harness: 1.2 s into a backfill, exit 1). On the command
    line the bridge calls refill's handler instead, so the first SIGTERM anywhere in the
    run stops at the next safe point, like Ctrl-C. A worker's runs (not armed) keep
    Prefect's own handling."""
    from prefect.utilities import engine

    prefects = engine._prefect_sigterm_handler
    if getattr(prefects, "routed_to_refill", False):
        return

    def bridge(signum: int, *args: object) -> None:
        if interrupts.is_armed():
            return interrupts.handle(signum, args[0] if args else None)
        return prefects(signum, *args)

    bridge.routed_to_refill = True  # type: ignore[attr-defined]
    engine._prefect_sigterm_handler = bridge


def end_as_cancelled(flow_body):
    """Decorate a flow body: an interrupt ends the flow run Cancelled with its message.

    Put it under the outermost decorator: Prefect resolves the flow's parameter annotations
    in the outermost function's module, which must import their types (tasks.py does).

    Inside a flow run Prefect installs its own SIGTERM handler; on the command line
    (armed) refill's takes SIGTERM back for the body, so SIGTERM stops at a safe point
    like Ctrl-C."""

    @functools.wraps(flow_body)
    def wrapper(*args, **kwargs):
        from prefect.states import Cancelled

        with interrupts.sigterm_stops_at_safe_points():
            try:
                return flow_body(*args, **kwargs)
            except interrupts.Interrupted as stop:
                return Cancelled(message=str(stop))

    return wrapper
