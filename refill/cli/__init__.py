"""The `refill` command line, the top of the layers: one module per command, each with its
options (`add_arguments`) and its `main`, its options added to the parser when that command
is parsed or its help shown (a command does not import the flows or the warehouse for
another's options). The only package that imports both the flows and the views.

Every command says what it is about to do, and on failure prints one line,
`refill: error: ...`, once, and exits non-zero (refill.errors says which status: 2 for a
usage error, 1 for a failure or refusal about the data, 130 when interrupted); the
warehouse is then as it was. Prefect's log and the flow run's state keep the detail.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys

from refill import interrupts, options, settings
from refill.cli.parser import DefaultsShown, OneLineParser, version_line
from refill.errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PIPE_CLOSED,
    RefillError,
)
from refill.rules.redaction import redacted

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

__all__ = ["EXIT_FAILURE", "EXIT_OK", "build_parser", "main", "program"]

# Each command, the module of refill/cli/ with its options and `main`, and its one-line
# help, in the order `refill --help` lists them.
COMMANDS = (
    ("daily", "daily", "build one logical date"),
    ("backfill", "backfill", "rebuild an explicit range in chunks"),
    ("status", "status", "a table per day: ready, state, code version, rows vs source"),
    ("gaps", "gaps", "missing, failed and stale days, and hour holes; exit 1 if any"),
    ("cutover", "cutover", "switch a versioned model's readers to a version"),
    ("board", "board", "the partition board: an HTML page of the days"),
    ("demo", "demo", "a week of daily runs, a late file, a backfill"),
    ("sample-data", "sample_data", "write deterministic sample landing days"),
    ("ci", "ci", "what a pull request does to the published numbers, vs a base ref"),
)


def _main_of(module: str):
    def handler(args: argparse.Namespace) -> int:
        return importlib.import_module(module).main(args)

    return handler


def build_parser(*, this_installation: bool = True) -> argparse.ArgumentParser:
    """The `refill` parser. `this_installation`: the help names the project, target and
    warehouse this process would use (left out of the generated CLI reference, which must
    not depend on the machine that wrote it)."""
    where = ""
    if this_installation:
        try:
            where = f" Uses the {settings.where_line()}."
        except RefillError as error:  # the command says it, exit 2; the help still shows
            where = f" Cannot run here: {error}."
    parser = OneLineParser(
        prog="refill",
        description="Safe backfills and reruns of partitioned data.",
        epilog="exit status: 0 ok, 1 a failure or refusal (gaps: gaps found), 2 a usage "
        f"error, 130 interrupted.{where}",
        formatter_class=DefaultsShown,
    )
    parser.add_argument("--version", action="version", version=version_line())
    commands = parser.add_subparsers(
        dest="command",
        required=True,
        parser_class=functools.partial(OneLineParser, formatter_class=DefaultsShown),
    )
    for name, module, text in COMMANDS:
        command = commands.add_parser(name, help=text, arguments_from=f"refill.cli.{module}")
        command.set_defaults(handler=_main_of(f"refill.cli.{module}"))
    return parser


def main(argv: list[str] | None = None, *, as_program: bool = False) -> int:
    """Run one command and return its exit status. `as_program` (the `refill` program, the
    harness's child process): a signal after the command ended exits with this status."""
    interrupts.stop_at_once_until_armed()
    parser = build_parser()
    status = EXIT_INTERRUPTED  # if anything escapes, the `finally` still has a status
    try:
        args = parser.parse_args(argv)
        options.check(vars(args))  # every option's value, before anything runs
        status = args.handler(args)
    except BrokenPipeError:
        status = _output_closed()
    except RefillError as error:
        print(f"refill: error: {redacted(str(error))}", file=sys.stderr)
        status = error.exit_code
    except interrupts.Interrupted as stop:
        # the first Ctrl-C or SIGTERM, at a safe point: the run is closed, this is its summary
        print(f"refill: {stop}", flush=True)
        status = EXIT_INTERRUPTED
    finally:
        interrupts.disarm(exit_status=status if as_program else None)
    return status


def _output_closed() -> int:
    """The reader of the output went away (`refill status | head -1`): stop quietly. What
    is still buffered for it goes nowhere, and so does anything printed after."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_PIPE_CLOSED


def program() -> None:
    """The `refill` console script."""
    interrupts.end_process(main(as_program=True))
