"""`refill status`: a table per day (ready, state, code version, rows against the source)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from refill import settings
from refill.cli.parser import window_options
from refill.errors import EXIT_OK


def add_arguments(parser: argparse.ArgumentParser) -> None:
    window_options(parser)


def main(args: argparse.Namespace) -> int:
    from refill.views import status
    from refill.warehouse.dbt_runner import shared_project

    window = status.default_window(datetime.now(UTC).date(), args.start, args.end)
    print(f"refill status: {window}")
    print(f"using the {settings.where_line()}")
    statuses = status.collect_for(shared_project(), window)
    print("\n".join(status.data_as_of_lines()))
    print(status.status_table(statuses))
    return EXIT_OK
