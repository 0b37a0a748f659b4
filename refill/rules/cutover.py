"""Cutover's rules: which models can be cut over, where a switch goes, and the checks that
refuse it, each with its one-line reason (docs/cutover.md). Pure: the figures come from the
warehouse (refill.warehouse.cutover_store), the command runs them (refill.cli.cutover).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal

from refill.errors import RefillError
from refill.rules.catalog import Catalog, VersionedModel

# A refusal lists at most this many days and this many backfill commands; past that,
# one command covers the whole span (rebuilding a published day is harmless).
LISTED_DAYS = 5
LISTED_COMMANDS = 3
LARGEST_CHANGES = 5


@dataclass(frozen=True)
class KeyTotals:
    """One key value's totals over every compared day, in the current and the target version."""

    key: str
    before: dict[str, Decimal]
    after: dict[str, Decimal]


@dataclass(frozen=True)
class Change:
    """One day and key value whose headline measure differs between the versions."""

    day: date
    key: str
    before: Decimal
    after: Decimal

    @property
    def delta(self) -> Decimal:
        return self.after - self.before


@dataclass
class CutoverReport:
    """What a switch changes for readers, and whether it was made (shown by
    refill.views.cutover_report)."""

    model: str
    action: str  # "cutover" or "rollback"
    from_version: int
    to_version: int
    partition_column: str
    key_column: str | None  # None: the model declares no key (one total per day)
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


def versioned_model(model: str, catalog: Catalog) -> VersionedModel:
    """The catalog's entry for `model` (the dbt models' `meta.refill`, role versioned), or a
    refusal naming the ones refill serves."""
    spec = next((spec for spec in catalog.versioned if spec.name == model), None)
    if spec is None:
        known = ", ".join(spec.name for spec in catalog.versioned)
        raise RefillError(
            f"cutover refused: {model} is not a versioned model refill serves ({known})"
        )
    return spec


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


def check_covered(
    target_relation: str, current: int, current_days: Iterable[date], target_days: Iterable[date]
) -> None:
    """Check 1, coverage: the target is published for every day the current version is."""
    missing = missing_days(current_days, target_days)
    if missing:
        raise RefillError(
            f"cutover refused: {target_relation} is not published for {len(missing)} day(s) "
            f"that v{current} serves ({describe_days(missing)}); fill them first: "
            + "; ".join(backfill_commands(target_relation, missing))
        )


def check_reconciled(
    target_relation: str, upstream: str, unreconciled: list[tuple[date, str, Decimal, Decimal]]
) -> None:
    """Check 2, reconciliation: no published day of the target differs from what its
    version's rules give; `unreconciled` holds (day, measure, published, expected)."""
    if unreconciled:
        days = sorted({day for day, _, _, _ in unreconciled})
        details = "; ".join(
            f"{day} {measure} published {published} vs expected {expected}"
            for day, measure, published, expected in unreconciled[:LISTED_DAYS]
        )
        raise RefillError(
            f"cutover refused: {target_relation} does not reconcile with {upstream} on "
            f"{len(days)} day(s) ({details}); rebuild them: "
            + "; ".join(backfill_commands(target_relation, days, restate=True))
        )


def check_consent(report: CutoverReport, yes: bool) -> None:
    """Check 3, consent: a switch needs --yes, after the report was shown."""
    if not yes:
        raise RefillError(
            f"cutover refused: switching {report.model} to v{report.to_version} needs --yes; "
            f"review the report above (or run with --dry-run to only report)"
        )
