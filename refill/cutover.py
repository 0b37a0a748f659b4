"""`refill cutover`: move the readers of a versioned model to another version, or back.

Consumers read a view (`main.fct_daily_revenue`) that serves whichever version the
warehouse's pointer row names (`ops.version_pointer`; the view and the pointer are made by
macros/versions/). A build never moves the pointer; this module is the only thing that
does, and only after three checks, each a refusal with a one-line reason:

1. coverage: the target version is published (ledger) for every day the current one is;
   the refusal lists the missing days and the `refill backfill` commands that fill them;
2. reconciliation: every published day of the target still equals what its version's
   rules give from its upstream facts, the view `ops.<model>_v<n>__expected` that the
   version's in-transaction audit keeps (one home for those rules, dbt's macro
   fct_daily_revenue_expected_sql);
3. consent: a diff report (totals per market before and after, days changed, the
   largest changes) is shown first, and the switch needs `--yes`; `--dry-run` only
   reports.

The switch is one UPDATE of the pointer row, with its history row, in one transaction:
a reader's query sees the pointer before or after it, so all of one version or all of
the other. `--rollback` moves the pointer back to the previous version the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb

from refill import settings
from refill.errors import RefillError
from refill.warehouse.locking import LIVE, file_holder, warehouse_lock

# A refusal lists at most this many days and this many backfill commands; past that,
# one command covers the whole span (rebuilding a published day is harmless).
LISTED_DAYS = 5
LISTED_COMMANDS = 3
LARGEST_CHANGES = 5
# A cutover is a short, interactive command: it waits for a build in progress, not for hours.
DEFAULT_LOCK_WAIT_SECONDS = settings.COMMAND_LOCK_WAIT_SECONDS


@dataclass(frozen=True)
class VersionedModel:
    """A versioned model refill can cut over: its grain and what the report compares."""

    name: str
    partition_column: str
    key_column: str  # the grain within a partition
    measures: tuple[str, ...]  # compared in the report; the first is the headline
    upstream: str  # the model its versions reconcile with

    def relation_name(self, version: int) -> str:
        """The table dbt writes for a version (dbt's default alias, <name>_v<n>)."""
        return f"{self.name}_v{version}"


VERSIONED_MODELS = {
    "fct_daily_revenue": VersionedModel(
        name="fct_daily_revenue",
        partition_column="event_date",
        key_column="market",
        measures=("revenue_usd", "transactions"),
        upstream="fct_payments",
    ),
}


@dataclass(frozen=True)
class KeyTotals:
    """One market's totals over every compared day, in the current and the target version."""

    key: str
    before: dict[str, Decimal]
    after: dict[str, Decimal]


@dataclass(frozen=True)
class Change:
    """One day and market whose headline measure differs between the versions."""

    day: date
    key: str
    before: Decimal
    after: Decimal

    @property
    def delta(self) -> Decimal:
        return self.after - self.before


@dataclass
class CutoverReport:
    """What a switch changes for readers, and whether it was made."""

    model: str
    action: str  # "cutover" or "rollback"
    from_version: int
    to_version: int
    partition_column: str
    key_column: str
    measures: tuple[str, ...]
    totals: list[KeyTotals]
    days_compared: list[date]
    days_changed: list[date]
    largest_changes: list[Change]
    switched: bool = False
    dry_run: bool = False
    run_id: str | None = None
    switched_at: datetime | None = None
    warehouse: str = ""

    def render(self) -> str:
        """The report as a readable text table."""
        before, after = f"v{self.from_version}", f"v{self.to_version}"
        lines = [f"diff report, {self.model}: {before} (served now) vs {after}"]
        if self.days_compared:
            span = f"{self.days_compared[0]}..{self.days_compared[-1]}"
            lines.append(
                f"days compared: {len(self.days_compared)} ({span}); "
                f"days changed: {len(self.days_changed)}"
            )
        else:
            lines.append("days compared: 0")
        lines.append("")

        headers = [self.key_column]
        for measure in self.measures:
            headers += [f"{measure} {before}", f"{measure} {after}", "change", "change %"]
        rows = []
        grand_before = {m: Decimal(0) for m in self.measures}
        grand_after = {m: Decimal(0) for m in self.measures}
        for totals in self.totals:
            rows.append([totals.key, *self._compared(totals.before, totals.after)])
            for m in self.measures:
                grand_before[m] += totals.before[m]
                grand_after[m] += totals.after[m]
        rows.append(["total", *self._compared(grand_before, grand_after)])
        lines += _table(headers, rows)

        headline = self.measures[0]
        lines += ["", f"largest changes ({headline})"]
        if self.largest_changes:
            lines += _table(
                [self.partition_column, self.key_column, before, after, "change"],
                [
                    [str(c.day), c.key, _number(c.before), _number(c.after), _signed(c.delta)]
                    for c in self.largest_changes
                ],
            )
        else:
            lines.append("  none: every compared day is the same in both versions")

        status = self.status_line()
        if status:
            lines += ["", status]
        return "\n".join(lines)

    def status_line(self) -> str:
        """What became of the switch: made, or not made because of --dry-run."""
        if self.switched:
            return (
                f"switched: {self.model} now serves v{self.to_version} "
                f"(run {self.run_id}, {self.switched_at:%Y-%m-%d %H:%M:%S} UTC); "
                f"undo with: refill cutover {self.model} --rollback --yes"
            )
        if self.dry_run:
            return f"dry run: nothing switched; {self.model} still serves v{self.from_version}"
        return ""

    def _compared(self, before: dict[str, Decimal], after: dict[str, Decimal]) -> list[str]:
        cells = []
        for measure in self.measures:
            old, new = before[measure], after[measure]
            cells += [_number(old), _number(new), _signed(new - old), _percent(old, new)]
        return cells


# ---------------------------------------------------------------------------------------
# Pure decisions


def missing_days(current_days: Iterable[date], target_days: Iterable[date]) -> list[date]:
    """Days the current version publishes and the target does not, oldest first."""
    return sorted(set(current_days) - set(target_days))


def day_ranges(days: Iterable[date]) -> list[tuple[date, date]]:
    """Consecutive days grouped into inclusive (first, last) ranges, oldest first."""
    ranges: list[tuple[date, date]] = []
    for day in sorted(set(days)):
        if ranges and day == ranges[-1][1] + timedelta(days=1):
            ranges[-1] = (ranges[-1][0], day)
        else:
            ranges.append((day, day))
    return ranges


def backfill_commands(relation_name: str, days: Iterable[date], restate: bool = False) -> list[str]:
    """The `refill backfill` commands that publish `days` of one version, and nothing else.

    One command per run of consecutive days; past LISTED_COMMANDS runs, one command over
    the whole span instead (days already published are rebuilt to the same rows).
    `restate`: the days are published already (wrong, not missing), and `refill backfill`
    rebuilds a published day only with --restate and the sign-off --yes.
    """
    flags = " --restate --yes" if restate else ""
    ranges = day_ranges(days)
    if len(ranges) > LISTED_COMMANDS:
        ranges = [(ranges[0][0], ranges[-1][1])]
    return [
        f"refill backfill --start {first} --end {last} --select {relation_name}{flags}"
        for first, last in ranges
    ]


def describe_days(days: list[date]) -> str:
    """Days as short ranges, e.g. `2026-01-01..2026-01-03, 2026-01-07`, capped."""
    ranges = day_ranges(days)
    shown = [str(a) if a == b else f"{a}..{b}" for a, b in ranges[:LISTED_DAYS]]
    if len(ranges) > LISTED_DAYS:
        shown.append(f"and {len(ranges) - LISTED_DAYS} more ranges")
    return ", ".join(shown)


def choose_target(
    model: str, current: int, previous: int | None, to_version: int | None, rollback: bool
) -> tuple[str, int]:
    """("cutover" | "rollback", the version to switch to), or a refusal."""
    if rollback:
        if previous is None:
            raise RefillError(
                f"cutover refused: {model} has no previous version to roll back to "
                f"(it serves v{current} since its first build)"
            )
        if to_version is not None and to_version != previous:
            raise RefillError(
                f"cutover refused: --rollback goes back to v{previous}, not v{to_version}; "
                f"use --to {to_version} without --rollback"
            )
        return "rollback", previous
    if to_version is None:
        raise RefillError("cutover refused: say where to: --to N, or --rollback")
    if to_version == current:
        raise RefillError(f"cutover refused: {model} already serves v{current}; nothing to switch")
    return "cutover", to_version


def diff_sql(spec: VersionedModel, from_relation: str, to_relation: str) -> str:
    """One row per day and key in either version, with each measure before and after.

    A row present in one version only compares against zero.
    """
    part, key = spec.partition_column, spec.key_column
    sums = ", ".join(f"sum({m}) as {m}" for m in spec.measures)
    pairs = ",\n        ".join(
        f"coalesce(before.{m}, 0) as before_{m}, coalesce(after.{m}, 0) as after_{m}"
        for m in spec.measures
    )
    return f"""
    with before as (
        select {part} as day, {key} as key, {sums} from {from_relation} group by 1, 2
    ),
    after as (
        select {part} as day, {key} as key, {sums} from {to_relation} group by 1, 2
    )
    select
        coalesce(before.day, after.day) as day,
        coalesce(before.key, after.key) as key,
        {pairs}
    from before
    full outer join after on before.day = after.day and before.key = after.key
    """


# ---------------------------------------------------------------------------------------
# The command


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

    Works on the warehouse at settings.warehouse_path() under the warehouse lock
    (refill.warehouse.locking: it waits for a build in progress, at most `lock_wait_seconds`), with
    its own connection, opened for the command and closed after it. Every check and the
    switch run in one transaction, so what was checked is what is switched. `echo`
    receives what the command is about to do and the report, before the switch or the
    refusal. Raises RefillError (one line) on any refusal; the warehouse is then as it was.
    """
    say = echo or (lambda _text: None)
    spec = VERSIONED_MODELS.get(model)
    if spec is None:
        known = ", ".join(sorted(VERSIONED_MODELS))
        raise RefillError(
            f"cutover refused: {model} is not a versioned model refill serves ({known})"
        )
    warehouse = settings.warehouse_path()
    if not warehouse.exists():
        raise RefillError(
            f"cutover refused: no warehouse at {warehouse}; build it first (dbt build)"
        )

    run_id = run_id or f"cutover-{uuid.uuid4().hex[:12]}"
    with warehouse_lock(
        warehouse,
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
    warehouse: Path,
    to_version: int | None,
    rollback: bool,
    yes: bool,
    dry_run: bool,
    command_line: str,
    say: Callable[[str], None],
    run_id: str,
) -> CutoverReport:
    connection = _connect(warehouse)
    try:
        connection.begin()
        report = _check_and_report(connection, spec, to_version, rollback, say, warehouse)
        report.dry_run = dry_run
        say(report.render())
        if dry_run:
            connection.rollback()
            return report
        if not yes:
            raise RefillError(
                f"cutover refused: switching {spec.name} to v{report.to_version} needs --yes; "
                f"review the report above (or run with --dry-run to only report)"
            )
        report.run_id = run_id
        report.switched_at = datetime.now(UTC).replace(tzinfo=None)
        _switch(connection, report, command_line)
        connection.commit()
        report.switched = True
        say(report.status_line())
        return report
    except BaseException:
        _rollback_quietly(connection)
        raise
    finally:
        connection.close()


def _connect(warehouse: Path) -> duckdb.DuckDBPyConnection:
    """The command's one read-write connection, taken under the warehouse lock after
    warehouse_lock waited for processes outside refill to close the file."""
    try:
        return duckdb.connect(str(warehouse))
    except duckdb.IOException as error:
        outside = file_holder(error)
        reason = outside.describe() if outside else " ".join(str(error).split())
        raise RefillError(
            f"cutover refused: the warehouse is open in {reason}; run again when it closes it"
            if outside
            else f"cutover refused: cannot open the warehouse ({reason})"
        ) from None


def _rollback_quietly(connection: duckdb.DuckDBPyConnection) -> None:
    # No transaction may be open any more (committed, or never begun).
    with contextlib.suppress(duckdb.Error):
        connection.rollback()


def _check_and_report(
    connection: duckdb.DuckDBPyConnection,
    spec: VersionedModel,
    to_version: int | None,
    rollback: bool,
    say: Callable[[str], None],
    warehouse: Path,
) -> CutoverReport:
    pointer = None
    if _exists(connection, "ops", "version_pointer"):
        pointer = connection.execute(
            "select current_version, previous_version from ops.version_pointer "
            "where model_name = ?",
            [spec.name],
        ).fetchone()
    if pointer is None:
        raise RefillError(
            f"cutover refused: {spec.name} has no version pointer in {warehouse}; "
            f"build it first (dbt build)"
        )
    current, previous = pointer
    action, target = choose_target(spec.name, current, previous, to_version, rollback)
    rolling_back = " (rollback)" if action == "rollback" else ""
    say(f"refill cutover {spec.name}: v{current} -> v{target}{rolling_back}; checking {warehouse}")

    target_relation = spec.relation_name(target)
    if not _exists(connection, "main", target_relation):
        raise RefillError(
            f"cutover refused: {target_relation} does not exist; build it first: "
            f"refill backfill --start ... --end ... --select {target_relation}"
        )

    current_days = _published_days(connection, spec.relation_name(current))
    target_days = _published_days(connection, target_relation)
    missing = missing_days(current_days, target_days)
    if missing:
        raise RefillError(
            f"cutover refused: {target_relation} is not published for {len(missing)} day(s) "
            f"that v{current} serves ({describe_days(missing)}); fill them first: "
            + "; ".join(backfill_commands(target_relation, missing))
        )

    unreconciled = _unreconciled(connection, spec, target_relation)
    if unreconciled:
        days = sorted({day for day, _, _, _ in unreconciled})
        details = "; ".join(
            f"{day} {measure} published {published} vs expected {expected}"
            for day, measure, published, expected in unreconciled[:LISTED_DAYS]
        )
        raise RefillError(
            f"cutover refused: {target_relation} does not reconcile with {spec.upstream} on "
            f"{len(days)} day(s) ({details}); rebuild them: "
            + "; ".join(backfill_commands(target_relation, days, restate=True))
        )

    return _diff_report(connection, spec, action, current, target, str(warehouse))


def _exists(connection: duckdb.DuckDBPyConnection, schema: str, name: str) -> bool:
    (count,) = connection.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, name],
    ).fetchone()
    return count > 0


def _published_days(connection: duckdb.DuckDBPyConnection, relation_name: str) -> list[date]:
    rows = connection.execute(
        "select partition_date from ops.partition_ledger "
        "where model_name = ? and status = 'published' order by 1",
        [relation_name],
    ).fetchall()
    return [day for (day,) in rows]


def _unreconciled(
    connection: duckdb.DuckDBPyConnection, spec: VersionedModel, relation_name: str
) -> list[tuple[date, str, Decimal, Decimal]]:
    """(day, measure, published, expected) for every published day of the version that no
    longer equals its rules' figures from the upstream facts, oldest first."""
    expected = f"{relation_name}__expected"
    if not _exists(connection, "ops", expected):
        raise RefillError(
            f"cutover refused: ops.{expected} is missing, so {relation_name} cannot be checked; "
            f"rebuild it with this code: refill backfill --start ... --end ... "
            f"--select {relation_name}"
        )
    measures = [
        name
        for (name,) in connection.execute(
            "select column_name from information_schema.columns "
            "where table_schema = 'ops' and table_name = ? and column_name <> 'partition_date' "
            "order by ordinal_position",
            [expected],
        ).fetchall()
    ]
    sums = ", ".join(f"sum({m}) as {m}" for m in measures)
    compared = " union all ".join(
        f"select day, '{m}' as measure, coalesce(published.{m}, 0) as published_value, "
        f"coalesce(expected.{m}, 0) as expected_value "
        f"from days "
        f"left join published using (day) left join expected using (day)"
        for m in measures
    )
    rows = connection.execute(
        f"""
        with days as (
            select partition_date as day from ops.partition_ledger
            where model_name = ? and status = 'published'
        ),
        published as (
            select {spec.partition_column} as day, {sums} from main.{relation_name} group by 1
        ),
        expected as (
            select partition_date as day, {sums} from ops.{expected} group by 1
        ),
        compared as ({compared})
        select day, measure, published_value, expected_value
        from compared
        where published_value <> expected_value
        order by day, measure
        """,
        [relation_name],
    ).fetchall()
    return [(day, measure, published, expected) for day, measure, published, expected in rows]


def _diff_report(
    connection: duckdb.DuckDBPyConnection,
    spec: VersionedModel,
    action: str,
    current: int,
    target: int,
    warehouse: str,
) -> CutoverReport:
    paired = diff_sql(
        spec, f"main.{spec.relation_name(current)}", f"main.{spec.relation_name(target)}"
    )
    changed = " or ".join(f"before_{m} <> after_{m}" for m in spec.measures)
    totals_columns = ", ".join(f"sum(before_{m}), sum(after_{m})" for m in spec.measures)
    totals = []
    for row in connection.execute(
        f"with paired as ({paired}) "
        f"select key, {totals_columns} from paired group by key order by key"
    ).fetchall():
        values = row[1:]
        totals.append(
            KeyTotals(
                key=row[0],
                before={m: values[2 * i] for i, m in enumerate(spec.measures)},
                after={m: values[2 * i + 1] for i, m in enumerate(spec.measures)},
            )
        )
    days_compared = [
        day
        for (day,) in connection.execute(
            f"with paired as ({paired}) select distinct day from paired order by 1"
        ).fetchall()
    ]
    days_changed = [
        day
        for (day,) in connection.execute(
            f"with paired as ({paired}) select distinct day from paired where {changed} order by 1"
        ).fetchall()
    ]
    headline = spec.measures[0]
    largest = [
        Change(day, key, before, after)
        for day, key, before, after in connection.execute(
            f"""
            with paired as ({paired})
            select day, key, before_{headline}, after_{headline}
            from paired
            where before_{headline} <> after_{headline}
            order by abs(after_{headline} - before_{headline}) desc, day, key
            limit {LARGEST_CHANGES}
            """
        ).fetchall()
    ]
    return CutoverReport(
        model=spec.name,
        action=action,
        from_version=current,
        to_version=target,
        partition_column=spec.partition_column,
        key_column=spec.key_column,
        measures=spec.measures,
        totals=totals,
        days_compared=days_compared,
        days_changed=days_changed,
        largest_changes=largest,
        warehouse=warehouse,
    )


def _switch(
    connection: duckdb.DuckDBPyConnection, report: CutoverReport, command_line: str
) -> None:
    """One UPDATE moves the pointer (only from the version that was checked), one INSERT
    records it; the caller commits both together."""
    (updated,) = connection.execute(
        """
        update ops.version_pointer
        set
            current_version = ?,
            previous_version = current_version,
            switched_at = ?,
            run_id = ?
        where model_name = ? and current_version = ?
        """,
        [report.to_version, report.switched_at, report.run_id, report.model, report.from_version],
    ).fetchone()
    if updated != 1:
        raise RefillError(
            f"cutover refused: {report.model} moved while this command checked it; run it again"
        )
    connection.execute(
        "insert into ops.version_switches values (?, ?, ?, ?, ?, ?)",
        [
            report.model,
            report.from_version,
            report.to_version,
            report.switched_at,
            report.run_id,
            command_line,
        ],
    )


# ---------------------------------------------------------------------------------------
# Command-line hooks (registered by refill/cli.py as `refill cutover`)


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


# ---------------------------------------------------------------------------------------
# Text table


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        first = f"  {cells[0]:<{widths[0]}}"
        rest = [f"{cell:>{width}}" for cell, width in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(row) for row in rows)]


def _number(value: Decimal | int) -> str:
    return f"{value:,}"


def _signed(value: Decimal | int) -> str:
    return f"{value:+,}"


def _percent(before: Decimal | int, after: Decimal | int) -> str:
    if before == 0:
        return "n/a" if after != 0 else "0.0%"
    return f"{(Decimal(after) - Decimal(before)) / abs(Decimal(before)) * 100:+.1f}%"


if __name__ == "__main__":
    import sys

    parser = argparse.ArgumentParser(prog="refill cutover", description=__doc__.splitlines()[0])
    add_arguments(parser)
    try:
        sys.exit(main(parser.parse_args()))
    except RefillError as refusal:
        print(refusal, file=sys.stderr)
        sys.exit(1)
