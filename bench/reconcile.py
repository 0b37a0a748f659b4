"""(e) against refill, day by day: where the plain microbatch publishes what refill does,
and where and why it does not.

Both warehouses were built from the same landing. A day is identical when both hold the
same payments with the same values (so the same count, amount and amount_usd). Every
difference is expected on a day where refill quarantined lines, and only there:
  - a malformed line that read_json could not parse is a row of nulls that (e) filters
    out: lost without a trace (`lost_lines`);
  - a malformed line that parses (an unknown currency, market or status, a missing field,
    a value that does not cast, an event on another day) is published by (e) as it is
    (`published_malformed`);
  - of a transaction landed in conflicting versions, (e) publishes one version where
    refill quarantines them all (`published_conflicting`).
Anything else (`unexplained`: a payment refill published that (e) lacks or holds with
other values, or one (e) published for no quarantined line) is a disagreement on clean
data, and the comparison says so.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb

# How refill_classify_landed_lines words the reason of a conflicting version (payments'
# declaration names its entity `transaction`).
CONFLICT_REASON_PREFIX = "conflicting versions of transaction"

PER_DAY_SQL = """
with days as (
    select range::date as day
    from range($start::date, $end::date + 1, interval 1 day)
),

refill_payments as (
    select * from refill_warehouse.main.fct_payments
    where event_date between $start and $end
),

plain_payments as (
    select * from plain_warehouse.main.fct_payments
    where event_date between $start and $end
),

quarantine as (
    select
        landed_date,
        transaction_id,
        starts_with(quarantine_reason, $conflict_prefix) as is_conflicting
    from refill_warehouse.main.payments_quarantine
    where landed_date between $start and $end
),

malformed as (
    select distinct landed_date, transaction_id from quarantine where not is_conflicting
),

conflicting as (
    select distinct landed_date, transaction_id from quarantine where is_conflicting
),

paired as (
    select
        coalesce(refill.event_date, plain.event_date) as day,
        coalesce(refill.transaction_id, plain.transaction_id) as transaction_id,
        refill.transaction_id is not null as in_refill,
        plain.transaction_id is not null as in_plain,
        (refill.event_ts, refill.amount, refill.currency, refill.amount_usd, refill.market,
            refill.status)
        is distinct from
        (plain.event_ts, plain.amount, plain.currency, plain.amount_usd, plain.market,
            plain.status) as values_differ
    from refill_payments as refill
    full join plain_payments as plain
        on refill.event_date = plain.event_date and refill.transaction_id = plain.transaction_id
),

explained as (
    select
        paired.*,
        malformed.transaction_id is not null as is_malformed,
        conflicting.transaction_id is not null as is_conflicting
    from paired
    left join malformed
        on paired.day = malformed.landed_date and paired.transaction_id = malformed.transaction_id
    left join conflicting
        on paired.day = conflicting.landed_date
        and paired.transaction_id = conflicting.transaction_id
),

differences as (
    select
        day,
        count(*) filter (where not in_refill and is_malformed) as published_malformed,
        count(*) filter (where not in_refill and is_conflicting) as published_conflicting,
        count(*) filter (
            where in_refill and values_differ
            or not in_refill and not is_malformed and not is_conflicting
        ) as unexplained
    from explained
    group by day
),

totals as (
    select
        event_date as day,
        count(*) as payments,
        sum(amount) as amount,
        sum(amount_usd) as amount_usd
    from refill_payments
    group by 1
),

plain_totals as (
    select
        event_date as day,
        count(*) as payments,
        sum(amount) as amount,
        sum(amount_usd) as amount_usd
    from plain_payments
    group by 1
),

quarantined as (
    select
        landed_date as day,
        count(*) filter (where not is_conflicting) as malformed_lines,
        count(distinct transaction_id) filter (where is_conflicting) as conflicting_transactions,
        count(*) filter (
            where not is_conflicting
            and not exists (
                select 1 from plain_payments as plain
                where plain.event_date = quarantine.landed_date
                    and plain.transaction_id = quarantine.transaction_id
            )
        ) as lost_lines
    from quarantine
    group by 1
)

select
    days.day,
    coalesce(totals.payments, 0),
    coalesce(totals.amount, 0),
    coalesce(totals.amount_usd, 0),
    coalesce(plain_totals.payments, 0),
    coalesce(plain_totals.amount, 0),
    coalesce(plain_totals.amount_usd, 0),
    coalesce(quarantined.malformed_lines, 0),
    coalesce(quarantined.conflicting_transactions, 0),
    coalesce(differences.published_malformed, 0),
    coalesce(differences.published_conflicting, 0),
    coalesce(quarantined.lost_lines, 0),
    coalesce(differences.unexplained, 0)
from days
left join totals on days.day = totals.day
left join plain_totals on days.day = plain_totals.day
left join quarantined on days.day = quarantined.day
left join differences on days.day = differences.day
order by days.day
"""


@dataclass(frozen=True)
class DayComparison:
    """One day as refill and (e) published it, and what refill quarantined that day."""

    day: date
    refill_payments: int
    refill_amount: Decimal
    refill_amount_usd: Decimal
    plain_payments: int
    plain_amount: Decimal
    plain_amount_usd: Decimal
    malformed_lines: int  # lines refill quarantined as malformed
    conflicting_transactions: int  # transactions refill quarantined in conflicting versions
    published_malformed: int  # payments (e) published from lines refill found malformed
    published_conflicting: int  # conflicting transactions (e) published one version of
    lost_lines: int  # malformed lines of which (e) kept nothing
    unexplained: int  # payments that differ for no quarantined line: must be 0

    @property
    def has_bad_lines(self) -> bool:
        return self.malformed_lines > 0 or self.conflicting_transactions > 0

    @property
    def identical(self) -> bool:
        return (
            self.published_malformed + self.published_conflicting + self.unexplained == 0
            and self.refill_payments == self.plain_payments
            and self.refill_amount == self.plain_amount
            and self.refill_amount_usd == self.plain_amount_usd
        )

    @property
    def why(self) -> str:
        """Why (e) published this day differently, in words; empty when it did not."""
        if self.identical:
            return ""
        reasons = []
        if self.published_malformed:
            reasons.append(f"published {self.published_malformed} malformed line(s)")
        if self.lost_lines:
            reasons.append(f"lost {self.lost_lines} unparsable line(s)")
        if self.published_conflicting:
            reasons.append(
                f"kept one version of {self.published_conflicting} conflicting transaction(s)"
            )
        if self.unexplained:
            reasons.append(f"{self.unexplained} payment(s) differ with no quarantined line")
        return "; ".join(reasons) or "differs with no quarantined line"

    def to_json(self) -> dict:
        data = asdict(self)
        data["day"] = self.day.isoformat()
        for name in ("refill_amount", "refill_amount_usd", "plain_amount", "plain_amount_usd"):
            data[name] = str(data[name])
        data["identical"] = self.identical
        data["why"] = self.why
        return data


def compare_days(
    refill_warehouse: Path, plain_warehouse: Path, start: date, end: date
) -> list[DayComparison]:
    """Each day of [start, end] as refill and (e) published it (both warehouses read only)."""
    with duckdb.connect() as connection:
        connection.execute("attach ? as refill_warehouse (read_only)", [str(refill_warehouse)])
        connection.execute("attach ? as plain_warehouse (read_only)", [str(plain_warehouse)])
        rows = connection.execute(
            PER_DAY_SQL, {"start": start, "end": end, "conflict_prefix": CONFLICT_REASON_PREFIX}
        ).fetchall()
    return [DayComparison(*row) for row in rows]


def summarise(days: list[DayComparison], listed: int = 10) -> dict:
    """The counts the bench prints, with the first `listed` differing days spelled out."""
    differing = [day for day in days if not day.identical]
    return {
        "days": len(days),
        "identical_days": len(days) - len(differing),
        "differing_days": len(differing),
        "clean_days": sum(not day.has_bad_lines for day in days),
        # days that differ with no quarantined line: a disagreement on clean data
        "differing_clean_days": sum(not day.has_bad_lines for day in differing),
        "malformed_lines": sum(day.malformed_lines for day in days),
        "conflicting_transactions": sum(day.conflicting_transactions for day in days),
        "lost_lines": sum(day.lost_lines for day in days),
        "published_malformed": sum(day.published_malformed for day in days),
        "published_conflicting": sum(day.published_conflicting for day in days),
        "unexplained": sum(day.unexplained for day in days),
        "refill_payments": sum(day.refill_payments for day in days),
        "plain_payments": sum(day.plain_payments for day in days),
        "differing": [day.to_json() for day in differing[:listed]],
    }
