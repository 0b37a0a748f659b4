"""The catalog's rules: what the models' meta.refill declare, read into datasets and
versioned marts; one dataset's readiness unchanged, several combined."""

from __future__ import annotations

from datetime import date

import pytest

from refill.errors import RefillError
from refill.rules.catalog import catalog_of, chunk_rows_model
from refill.rules.readiness import DayReadiness, combined_readiness

FACTS = {"dataset": "payments", "role": "facts", "totals": "amount_usd", "hours": "event_ts"}
REFUNDS = {"dataset": "refunds", "role": "facts", "totals": "amount_usd"}
DAY = date(2026, 2, 1)


def test_datasets_primary_first_then_by_name_with_their_quarantine_and_versioned_marts():
    catalog = catalog_of(
        [
            ("fct_adjustments", {"dataset": "adjustments", "role": "facts", "totals": "x"}, "d"),
            ("fct_payments", {**FACTS, "primary": True}, "event_date"),
            ("payments_quarantine", {"dataset": "payments", "role": "quarantine"}, "landed_date"),
            ("stg_payments__lines", {}, None),
            (
                "fct_daily_revenue",
                {
                    "role": "versioned",
                    "key": "market",
                    "measures": ["revenue_usd"],
                    "upstream": "fct_payments",
                },
                "event_date",
            ),
        ]
    )
    assert catalog.names == ("payments", "adjustments")
    assert catalog.primary.quarantine_model == "payments_quarantine"
    assert catalog.primary.partition_column == "event_date"
    assert catalog.datasets[1].hours_column is None
    (revenue,) = catalog.versioned
    assert revenue.relation_name(2) == "fct_daily_revenue_v2" and revenue.key_column == "market"


@pytest.mark.parametrize(
    ("models", "message"),
    [
        ([], "declares no dataset"),
        (
            [("fct_payments", {"dataset": "payments", "role": "facts"}, None)],
            "meta.refill.partition_column is required",
        ),
        (
            [("q", {"dataset": "refunds", "role": "quarantine"}, "d"), ("f", FACTS, "d")],
            "has no facts model",
        ),
        ([("f", {**FACTS, "role": "fact"}, "d")], "is not facts, quarantine or versioned"),
    ],
)
def test_a_declaration_missing_what_refill_needs_is_refused_naming_the_model(models, message):
    with pytest.raises(RefillError, match=message):
        catalog_of(models)


def test_totals_and_a_versioned_key_are_optional_and_a_dataset_is_said_in_its_words():
    # GIVEN a dataset declaring no totals, one declaring them, and a mart with no key
    catalog = catalog_of(
        [
            ("fct_events", {"dataset": "events", "role": "facts"}, "event_day"),
            ("fct_sales", {"dataset": "sales", "role": "facts", "totals": "net"}, "day"),
            (
                "daily_sales",
                {"role": "versioned", "measures": ["net"], "upstream": "fct_sales"},
                "day",
            ),
        ]
    )
    events, sales = catalog.datasets

    # THEN the one says its rows only, the other its rows and its totals column by name
    assert events.totals_column is None and events.describe_totals(7, 0.0) == "7 rows"
    assert sales.describe_totals(7, 1234.5) == "7 rows, net 1,234.50"
    (daily,) = catalog.versioned
    assert daily.key_column is None


def test_the_primary_dataset_is_the_one_marked_else_the_first_by_name():
    # GIVEN two datasets, none marked primary, then the second marked
    unmarked = [
        ("fct_b", {**REFUNDS, "dataset": "b"}, "d"),
        ("fct_a", {**FACTS, "dataset": "a"}, "d"),
    ]
    marked = [("fct_b", {**REFUNDS, "dataset": "b", "primary": True}, "d"), unmarked[1]]

    # THEN the first by name is primary, unless another is marked
    assert catalog_of(unmarked).primary.name == "a"
    assert catalog_of(marked).primary.name == "b"


def test_a_command_builds_the_datasets_whose_facts_it_selects():
    catalog = catalog_of([("fct_payments", FACTS, "d"), ("fct_refunds", REFUNDS, "d")])
    assert catalog.built_by([]) == catalog.datasets  # no selection: every dataset
    assert [d.name for d in catalog.built_by(["fct_refunds", "x"])] == ["refunds"]
    assert catalog.built_by(["fct_daily_revenue_v2"]) == ()


def test_a_chunk_reports_the_rows_of_the_first_selected_datasets_facts():
    catalog = catalog_of([("fct_payments", FACTS, "d"), ("fct_refunds", REFUNDS, "d")])
    assert chunk_rows_model(catalog, []) == "fct_payments"
    assert chunk_rows_model(catalog, ["fct_refunds"]) == "fct_refunds"
    assert chunk_rows_model(catalog, ["fct_daily_revenue_v1"]) == "fct_daily_revenue_v1"


def test_one_datasets_verdict_is_unchanged_and_several_are_ready_only_together():
    payments = DayReadiness(
        DAY, True, "ready", ["payments/a"], 1, 10, "2026-02-02T01:00:00Z", "fp-p"
    )
    refunds = DayReadiness(DAY, True, "ready", ["refunds/a"], 1, 3, "2026-02-02T02:00:00Z", "fp-r")
    assert combined_readiness(["payments"], [payments]) is payments

    both = combined_readiness(["payments", "refunds"], [payments, refunds])
    assert both.is_ready and both.manifest_records == 13
    assert both.part_files == ["payments/a", "refunds/a"]
    assert both.source_fingerprint not in (None, "fp-p", "fp-r")

    late = DayReadiness(DAY, False, "no _SUCCESS manifest")
    waiting = combined_readiness(["payments", "refunds"], [payments, late])
    assert not waiting.is_ready and waiting.reason == "refunds: no _SUCCESS manifest"
