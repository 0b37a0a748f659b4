"""What every command that runs a flow does before the run: start the temporary Prefect
server in the background, arm Ctrl-C and SIGTERM, parse the dbt project meanwhile, and
name the command line the run log records."""

from __future__ import annotations

import shlex
import sys

from refill import interrupts


def command_line() -> str:
    return shlex.join(["refill", *sys.argv[1:]])


def start_the_server() -> None:
    """Start the temporary Prefect server in the background as soon as the command's own
    input is valid, before Prefect, dbt and the flows are imported (seconds): the server
    starts while they import and the dbt project parses, and the command waits for the
    longer of the two, not for the server after them. A signal from here until the
    command arms its handlers still ends it at once, the server stopped with it."""
    from flows import prefect_server

    prefect_server.start_in_background()


def start_flow_command() -> None:
    """What a flow command does once its options are valid: start the temporary Prefect
    server in the background (if not started yet), arm Ctrl-C and SIGTERM, and meanwhile
    parse the dbt project, so that planning (a --select typo refused with it) does not
    wait for the server."""
    from flows import prefect_server, signals
    from refill.warehouse.dbt_runner import shared_project

    start_the_server()
    prefect_server.keep_only_if_needed()
    signals.arm()
    shared_project().manifest  # noqa: B018 (parsed now, while the server starts)
    interrupts.raise_if_requested("before the run started")
