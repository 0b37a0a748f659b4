"""`refill ci`'s pure parts: which models it compares (from a parsed project's manifest)
and what its report says when nothing moves, when numbers move and when models come or go."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from refill.rules.code_change import CodeChangeReport, ComparedModel, Difference, compared_models
from refill.views import code_change_report

NODES = {
    "model.p.fct_payments": {
        "resource_type": "model",
        "name": "fct_payments",
        "alias": "fct_payments",
        "config": {
            "partition_column": "event_date",
            "meta": {"refill": {"role": "facts", "dataset": "payments", "totals": "amount_usd"}},
        },
    },
    "model.p.fct_daily_revenue.v2": {
        "resource_type": "model",
        "name": "fct_daily_revenue",
        "alias": "fct_daily_revenue_v2",
        "config": {"partition_column": "event_date"},
        "meta": {"refill": {"role": "versioned", "key": "market", "measures": ["revenue_usd"]}},
    },
    "model.p.payments_quarantine": {
        "resource_type": "model",
        "name": "payments_quarantine",
        "config": {"partition_column": "landed_date", "meta": {"refill": {"role": "quarantine"}}},
    },
    "model.p.stg_payments__lines": {"resource_type": "model", "name": "stg", "config": {}},
    "seed.p.markets": {"resource_type": "seed", "name": "markets", "config": {}},
}


def test_every_partitioned_model_is_compared_by_its_relation_with_its_declared_measures():
    assert compared_models(NODES) == {
        "fct_payments": ComparedModel("fct_payments", "event_date", None, ("amount_usd",)),
        "fct_daily_revenue_v2": ComparedModel(
            "fct_daily_revenue_v2", "event_date", "market", ("revenue_usd",)
        ),
        "payments_quarantine": ComparedModel("payments_quarantine", "landed_date", None, ()),
    }


def _report(**fields) -> CodeChangeReport:
    report = CodeChangeReport("main", "a" * 40, "b" * 12, date(2026, 1, 1), date(2026, 1, 3))
    report.compared = ["fct_payments"]
    for name, value in fields.items():
        setattr(report, name, value)
    return report


def test_a_change_that_moves_nothing_says_so_in_one_line():
    report = _report()
    assert code_change_report.summary(report) == (
        "no published number changes on 2026-01-01..2026-01-03"
    )
    assert "| day |" not in code_change_report.markdown(report)


def test_the_report_names_each_moved_day_model_market_and_the_models_added_or_removed():
    moved = Difference(
        date(2026, 1, 2),
        "fct_daily_revenue_v2",
        "FR",
        "revenue_usd",
        Decimal("10"),
        Decimal("12.5"),
    )
    report = _report(differences=[moved], added=["fct_new"], removed=["fct_old"])
    assert code_change_report.summary(report) == (
        "1 number(s) change on 1 day(s) (2026-01-02) in fct_daily_revenue_v2; "
        "model(s) added: fct_new; model(s) removed: fct_old"
    )
    text = code_change_report.markdown(report)
    assert (
        "| 2026-01-02 | fct_daily_revenue_v2 | FR | revenue_usd | 10 | 12.5 | +2.5 | +25.0% |"
        in text
    )
    assert "- added: fct_new" in text and "- removed: fct_old" in text
