"""The `refill` command line's option machinery: its parser (one-line usage errors, each
command's options added when that command is parsed), its help formatter (defaults shown),
and the option groups several commands share (a window of days, chunking, retries, the
preview). Each command's own options and `main` are in its module of refill/cli/."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata

from refill import settings
from refill.errors import EXIT_USAGE, RefillError
from refill.rules import planning


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2.

    `arguments_from` names a module whose `add_arguments` adds a command's arguments when
    that command is parsed or its help shown, not before: a flow command does not import
    the warehouse (DuckDB, dbt's runner) for another command's options."""

    def __init__(self, *args, arguments_from: str | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._arguments_from = arguments_from

    def _add_the_arguments(self) -> None:
        if self._arguments_from is not None:
            module, self._arguments_from = self._arguments_from, None
            importlib.import_module(module).add_arguments(self)

    def parse_known_args(self, args=None, namespace=None):
        self._add_the_arguments()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._add_the_arguments()
        return super().format_usage()

    def format_help(self) -> str:
        self._add_the_arguments()
        return super().format_help()

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"refill: error: {message} (see `{self.prog} --help`)\n")


class DefaultsShown(argparse.HelpFormatter):
    """`--help` shows each option's default, unless its help already says it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            default is None
            or default is False
            or default == argparse.SUPPRESS
            or "default" in text
            or f"({default})" in text
            or not action.option_strings
        ):
            return text
        shown = ",".join(f"{v:g}" for v in default) if isinstance(default, list) else default
        if isinstance(default, float):
            shown = f"{default:g}"
        return f"{text} (default: {shown})".strip()


def version_line() -> str:
    def of(package: str) -> str:
        try:
            return importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    return (
        f"refill {of('refill')} (dbt-core {of('dbt-core')}, dbt-duckdb {of('dbt-duckdb')}, "
        f"prefect {of('prefect')})"
    )


def delay_list(raw: str) -> list[float]:
    try:
        return [float(part) for part in raw.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{raw!r} is not a comma-separated list of seconds"
        ) from None


def day_type(name: str):
    def parse(raw: str):
        try:
            return planning.parse_day(name, raw)
        except RefillError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def window_options(command: argparse.ArgumentParser) -> None:
    """The days a report reads (`refill status`, `refill gaps`)."""
    command.add_argument(
        "--start",
        type=day_type("start"),
        help=f"first day, YYYY-MM-DD (default: {settings.STATUS_DAYS} days before --end)",
    )
    command.add_argument("--end", type=day_type("end"), help="last day (default: yesterday)")


def chunk_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--chunk-days",
        type=int,
        default=settings.CHUNK_DAYS,
        help="at most this many days per dbt invocation",
    )
    command.add_argument(
        "--chunk-lines",
        type=int,
        default=settings.CHUNK_LINES,
        help="at most this many landed lines per chunk, 0: no limit",
    )


def retry_options(command: argparse.ArgumentParser, lock_wait_seconds: float) -> None:
    command.add_argument(
        "--retries",
        type=int,
        default=settings.RETRIES,
        help="attempts per chunk; only a transient failure (the warehouse busy, an I/O "
        "error) is retried, a deterministic one fails at once",
    )
    command.add_argument(
        "--retry-delay",
        type=delay_list,
        default=list(settings.RETRY_DELAY_SECONDS),
        help="seconds between attempts, comma-separated",
    )
    command.add_argument(
        "--lock-wait",
        type=float,
        default=lock_wait_seconds,
        help="seconds to wait for the warehouse",
    )


def preview_options(command: argparse.ArgumentParser) -> None:
    """The restatement preview's options of `refill backfill` (refill/cli/preview.py)."""
    command.add_argument(
        "--preview",
        action="store_true",
        help="build and audit every chunk, publish nothing: report old vs new per day, "
        "keep the result for --from-preview",
    )
    command.add_argument(
        "--from-preview",
        metavar="ID",
        help="with --restate --yes: publish exactly what preview ID kept, without computing "
        "it again; refused if its code, landing or published days changed since",
    )
    command.add_argument(
        "--expect-change",
        metavar="START..END",
        help="--preview: flag the days that change outside this range",
    )
    command.add_argument(
        "--report-dir",
        help="--preview: save the report (JSON, markdown, HTML) under this folder "
        f"(default: ${{REFILL_PREVIEWS}} or {settings.DEFAULT_PREVIEW_REPORTS}/)",
    )
