"""`refill cutover`: move the readers of a versioned model to another version, or back.

Consumers read a view (`main.fct_daily_revenue`) that serves whichever version the
warehouse's pointer row names (`ops.version_pointer`; the view and the pointer are made by
macros/versions/). A build never moves the pointer; this command is the only thing that
does, and only after three checks (refill.rules.cutover), each a refusal with a one-line
reason:

1. coverage: the target version is published (ledger) for every day the current one is;
   the refusal lists the missing days and the `refill backfill` commands that fill them;
2. reconciliation: every published day of the target still equals what its version's
   rules give from its upstream facts, the view `ops.<model>_v<n>__expected` that the
   version's in-transaction audit keeps (one home for those rules, dbt's macro
   fct_daily_revenue_expected_sql);
3. consent: a diff report (totals per key value before and after, days changed, the
   largest changes; refill.views.cutover_report) is shown first, and the switch needs
   `--yes`; `--dry-run` only reports.

The switch is one UPDATE of the pointer row, with its history row, in one transaction
(refill.warehouse.cutover_store): a reader's query sees the pointer before or after it, so
all of one version or all of the other. `--rollback` moves the pointer back to the previous
version the same way.

On an engine without multi-statement transactions (Spark) the same checks run under the
locks of every day the two versions publish, and the switch is ONE appended pointer row
(the pointer is a log there, latest row wins), its single commit point; the consumer view
is then re-created from the pointer. Each crash window: docs/cutover.md, "On Spark".
"""

from __future__ import annotations

import argparse
import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import NoReturn

from refill import settings
from refill.errors import RefillError
from refill.rules import cutover as rules
from refill.rules.cutover import CutoverReport, VersionedModel
from refill.views import cutover_report
from refill.warehouse import cutover_store
from refill.warehouse.dbt_runner import shared_project
from refill.warehouse.engine import Connection, Warehouse, warehouse_at
from refill.warehouse.locking import LIVE

# A cutover is a short, interactive command: it waits for a build in progress, not for hours.
DEFAULT_LOCK_WAIT_SECONDS = settings.COMMAND_LOCK_WAIT_SECONDS


def cutover(
    model: str,
    to_version: int | None,
    rollback: bool,
    yes: bool,
    dry_run: bool,
    command_line: str,
    echo: Callable[[str], None] | None = None,
    run_id: str | None = None,
    lock_wait_seconds: float = DEFAULT_LOCK_WAIT_SECONDS,
) -> CutoverReport:
    """Check, report and (with `yes`, without `dry_run`) switch `model` to another version.

    Works on the warehouse at settings.warehouse_path() under the warehouse lock (it waits
    for a build in progress, at most `lock_wait_seconds`), with its own connection, opened
    for the command and closed after it. Every check and the switch run in one transaction,
    so what was checked is what is switched (on Spark: under the locks of the days checked,
    and the switch is one appended pointer row: _cutover_appending). `echo` receives what
    the command is about to do and the report, before the switch or the refusal. Raises
    RefillError (one line) on any refusal; the warehouse is then as it was.
    """
    say = echo or (lambda _text: None)
    warehouse = warehouse_at()
    spec = rules.versioned_model(model, shared_project().catalog)
    if not warehouse.exists():
        raise RefillError(
            f"cutover refused: no warehouse at {warehouse.path}; build it first (dbt build)"
        )

    run_id = run_id or f"cutover-{uuid.uuid4().hex[:12]}"
    if not warehouse.transactions:
        return _cutover_appending(
            spec,
            warehouse,
            to_version,
            rollback,
            yes,
            dry_run,
            command_line,
            say,
            run_id,
            lock_wait_seconds,
        )
    with warehouse.lock(
        run_id=run_id,
        command=command_line,
        priority=LIVE,
        wait_seconds=lock_wait_seconds,
        on_wait=lambda holder: say(f"waiting for the warehouse: {holder.describe()}"),
    ):
        return _cutover_locked(
            spec, warehouse, to_version, rollback, yes, dry_run, command_line, say, run_id
        )


def _cutover_locked(
    spec: VersionedModel,
    warehouse: Warehouse,
    to_version: int | None,
    rollback: bool,
    yes: bool,
    dry_run: bool,
    command_line: str,
    say: Callable[[str], None],
    run_id: str,
) -> CutoverReport:
    with cutover_store.transaction(warehouse) as connection:
        report = _check_and_report(connection, spec, to_version, rollback, say, warehouse)
        report.dry_run = dry_run
        say(cutover_report.render(report))
        if dry_run:
            connection.rollback()
            return report
        rules.check_consent(report, yes)
        report.run_id = run_id
        report.switched_at = datetime.now(UTC).replace(tzinfo=None)
        cutover_store.switch(connection, report, command_line)
        connection.commit()
        report.switched = True
        say(cutover_report.status_line(report))
        return report


def _cutover_appending(
    spec: VersionedModel,
    warehouse: Warehouse,
    to_version: int | None,
    rollback: bool,
    yes: bool,
    dry_run: bool,
    command_line: str,
    say: Callable[[str], None],
    run_id: str,
    lock_wait_seconds: float,
) -> CutoverReport:
    """The cutover on an engine without multi-statement transactions (Spark).

    The days both versions publish are read first and locked (Spark's lock is per day:
    no chunk replaces one of them until the switch is made; chunks over other days go
    on). Under the locks: the tables read again, the checks and the report as on DuckDB,
    then the pointer and the days re-verified and ONE pointer row appended, the switch's
    commit point. A crash before it changes nothing; after it the switch is made."""
    with cutover_store.transaction(warehouse) as connection:
        pointer = cutover_store.read_pointer(connection, spec.name)
        if pointer is None:
            _refuse_without_pointer(spec, warehouse)
        current, previous = pointer
        _, target = rules.choose_target(spec.name, current, previous, to_version, rollback)
        days = cutover_store.versions_days(connection, spec, [current, target])

    with (
        warehouse.lock(
            run_id=run_id,
            command=command_line,
            priority=LIVE,
            partitions=days,
            wait_seconds=lock_wait_seconds,
            on_wait=lambda holder: say(f"waiting for the warehouse: {holder.describe()}"),
        ),
        cutover_store.transaction(warehouse) as connection,
    ):
        cutover_store.read_again(connection, spec, [current, target])
        _recreate_version_views(spec.name, switched=False)
        report = _check_and_report(connection, spec, to_version, rollback, say, warehouse)
        if (report.from_version, report.to_version) != (current, target):
            raise RefillError(
                f"cutover refused: {spec.name} moved while this command waited; run it again"
            )
        report.dry_run = dry_run
        say(cutover_report.render(report))
        if dry_run:
            return report
        rules.check_consent(report, yes)
        report.run_id = run_id
        report.switched_at = datetime.now(UTC).replace(tzinfo=None)
        cutover_store.append_switch(connection, spec, report, command_line, days)
        report.switched = True
        _recreate_version_views(spec.name, switched=True)
        say(cutover_report.status_line(report))
        return report


def _recreate_version_views(model: str, switched: bool) -> None:
    """Spark: (re)create in this process's catalog the views a cutover reads and serves
    (each version's ops.<version>__expected and the consumer view; Spark's in-memory
    catalog keeps views per process), through dbt: their SQL has one home, the macros
    (macros/versions/refill_version_views.sql). The consumer view reads the pointer at
    query time, so re-creating it never moves the pointer."""
    arguments = json.dumps({"model_name": model})
    result = shared_project().invoke(["run-operation", "refill_version_views", "--args", arguments])
    if result.success:
        return
    messages = [getattr(item, "message", None) for item in getattr(result.result, "results", [])]
    detail = result.exception or next((m for m in messages if m), "see logs/dbt.log")
    reason = " ".join(str(detail).split()).split(" > in macro ")[0]
    if switched:
        raise RefillError(
            f"cutover made ({model} now serves the new version), but its consumer view was "
            f"not re-created here: {reason}; the next dbt build re-creates it"
        )
    raise RefillError(f"cutover refused: the views of {model} cannot be made: {reason}")


def _refuse_without_pointer(spec: VersionedModel, warehouse: Warehouse) -> NoReturn:
    raise RefillError(
        f"cutover refused: {spec.name} has no version pointer in {warehouse.path}; "
        f"build it first (dbt build)"
    )


def _check_and_report(
    connection: Connection,
    spec: VersionedModel,
    to_version: int | None,
    rollback: bool,
    say: Callable[[str], None],
    warehouse: Warehouse,
) -> CutoverReport:
    pointer = cutover_store.read_pointer(connection, spec.name)
    if pointer is None:
        _refuse_without_pointer(spec, warehouse)
    current, previous = pointer
    action, target = rules.choose_target(spec.name, current, previous, to_version, rollback)
    rolling_back = " (rollback)" if action == "rollback" else ""
    say(
        f"refill cutover {spec.name}: v{current} -> v{target}{rolling_back}; "
        f"checking {warehouse.path}"
    )

    target_relation = spec.relation_name(target)
    if not cutover_store.relation_exists(connection, target_relation):
        raise RefillError(
            f"cutover refused: {target_relation} does not exist; build it first: "
            f"refill backfill --start ... --end ... --select {target_relation}"
        )
    rules.check_covered(
        target_relation,
        current,
        cutover_store.published_days(connection, spec.relation_name(current)),
        cutover_store.published_days(connection, target_relation),
    )
    rules.check_reconciled(
        target_relation,
        spec.upstream,
        cutover_store.unreconciled(connection, spec, target_relation),
    )
    return cutover_store.diff_report(connection, spec, action, current, target, str(warehouse.path))


# ---------------------------------------------------------------------------------------
# The command line's options and `main` (`refill cutover`)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`refill cutover MODEL (--to N | --rollback) [--yes] [--dry-run]`."""
    parser.add_argument("model", help="the versioned model, e.g. fct_daily_revenue")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "--to", type=int, metavar="N", dest="to", help="the version readers should get"
    )
    target.add_argument(
        "--rollback", action="store_true", help="switch back to the previous version"
    )
    parser.add_argument("--yes", action="store_true", help="switch after the report")
    parser.add_argument(
        "--dry-run", action="store_true", help="check and report only; never switch"
    )
    parser.add_argument(
        "--lock-wait",
        type=float,
        default=DEFAULT_LOCK_WAIT_SECONDS,
        help=f"seconds to wait for the warehouse ({DEFAULT_LOCK_WAIT_SECONDS:g})",
    )


def command_line_of(args: argparse.Namespace) -> str:
    """The command as the history records it."""
    words = ["refill", "cutover", args.model]
    if args.rollback:
        words.append("--rollback")
    if getattr(args, "to", None) is not None:
        words += ["--to", str(args.to)]
    words += [flag for flag, on in (("--yes", args.yes), ("--dry-run", args.dry_run)) if on]
    return " ".join(words)


def main(args: argparse.Namespace) -> int:
    """Run `refill cutover` from parsed arguments; prints the report. A refusal raises
    RefillError (one line) for the command line to print and exit non-zero."""
    cutover(
        model=args.model,
        to_version=getattr(args, "to", None),
        rollback=args.rollback,
        yes=args.yes,
        dry_run=args.dry_run,
        command_line=command_line_of(args),
        echo=print,
        lock_wait_seconds=getattr(args, "lock_wait", DEFAULT_LOCK_WAIT_SECONDS),
    )
    return 0
