"""`refill ci`'s pure parts: which models it compares (the base's parsed project first, the
change's only adding to it), which columns of each (every one both builds have), and what
its report says when nothing moves, when numbers or other values move, when models or
columns come or go, and when the base did not build."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

from refill.rules.code_change import (
    CodeChangeReport,
    ComparedModel,
    Difference,
    ValueDifference,
    compared_models,
    plan_columns,
)
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


def test_every_partitioned_model_is_compared_by_its_relation_and_the_bases_key():
    assert compared_models(NODES) == {
        "fct_payments": ComparedModel("fct_payments", "main", "event_date", None),
        "fct_daily_revenue_v2": ComparedModel(
            "fct_daily_revenue_v2", "main", "event_date", "market"
        ),
        "payments_quarantine": ComparedModel("payments_quarantine", "main", "landed_date", None),
    }


def test_the_change_cannot_take_a_model_or_its_key_out_of_the_comparison():
    # GIVEN a change whose manifest drops v2's key and the quarantine's partition column,
    # and declares a model of its own
    change = json.loads(json.dumps(NODES))
    del change["model.p.fct_daily_revenue.v2"]["meta"]["refill"]["key"]
    del change["model.p.payments_quarantine"]["config"]["partition_column"]
    change["model.p.fct_new"] = {
        "resource_type": "model",
        "name": "fct_new",
        "config": {"partition_column": "event_date"},
    }
    # WHEN the models to compare are taken from the base and the change
    models = compared_models(NODES, change)
    # THEN the base's declarations decide, and the change's new model is there too
    assert models == {
        **compared_models(NODES),
        "fct_new": ComparedModel("fct_new", "main", "event_date", None),
    }
    assert compared_models(change) != compared_models(NODES)  # the change alone would not


def test_every_column_both_have_is_compared_and_the_others_are_named():
    model = ComparedModel("fct", "main", "event_date", "market")
    base = {
        "event_date": "DATE",
        "market": "VARCHAR",
        "amount": "DECIMAL(18,2)",
        "status": "VARCHAR",
        "gone": "BIGINT",
        "ratio": "DOUBLE",
    }
    change = {
        "event_date": "DATE",
        "market": "VARCHAR",
        "amount": "DECIMAL(18,4)",
        "status": "VARCHAR",
        "ratio": "DOUBLE",
        "new": "INTEGER",
    }
    plan = plan_columns(model, base, change)
    assert plan.key_column == "market" and plan.not_compared is None
    assert plan.summed == {"amount": False, "ratio": True}
    assert plan.valued == ("amount", "status", "ratio")
    assert {(c.column, c.base_type, c.change_type) for c in plan.column_changes} == {
        ("amount", "DECIMAL(18,2)", "DECIMAL(18,4)"),
        ("gone", "BIGINT", None),
        ("new", None, "INTEGER"),
    }


def test_a_key_or_partition_column_the_change_dropped_is_said_not_assumed():
    model = ComparedModel("fct", "main", "event_date", "market")
    without_key = plan_columns(
        model, {"event_date": "DATE", "market": "VARCHAR"}, {"event_date": "DATE"}
    )
    assert without_key.key_column is None and without_key.not_compared is None
    without_day = plan_columns(
        model, {"event_date": "DATE", "market": "VARCHAR"}, {"market": "VARCHAR"}
    )
    assert "event_date" in without_day.not_compared


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
    report.key_columns = {"fct_daily_revenue_v2": "market"}
    assert code_change_report.summary(report) == (
        "1 number(s) change on 1 day(s) (2026-01-02) in fct_daily_revenue_v2; "
        "model(s) added: fct_new; model(s) removed: fct_old"
    )
    text = code_change_report.markdown(report)
    assert (
        "| 2026-01-02 | fct_daily_revenue_v2 | market=FR | revenue_usd | 10 | 12.5 "
        "| +2.5 | +25.0% |" in text
    )
    assert "- added: fct_new" in text and "- removed: fct_old" in text


def test_a_column_whose_sum_moved_is_said_once_and_other_values_are_said_with_an_example():
    day = date(2026, 1, 2)
    report = _report()
    report.add(
        [Difference(day, "fct_payments", "", "amount_usd", Decimal("1"), Decimal("2"))],
        [
            ValueDifference(day, "fct_payments", "", "amount_usd", 1, 1, "1.00", "2.00"),
            ValueDifference(day, "fct_payments", "", "event_ts", 3, 3, "2026-01-02 00:00:07", None),
        ],
    )
    assert [v.column for v in report.value_differences] == ["event_ts"]
    assert code_change_report.summary(report) == (
        "1 number(s) and 1 other value(s) change on 1 day(s) (2026-01-02) in fct_payments"
    )
    text = code_change_report.markdown(report)
    assert (
        "| 2026-01-02 | fct_payments | - | event_ts | 3 value(s), first `2026-01-02 00:00:07` "
        in text
    )
    assert "| 3 value(s), first null |" in text


def test_a_base_that_did_not_build_is_said_and_nothing_compared():
    report = _report(base_failure="fails to build: model fct: Parser Error")
    assert code_change_report.summary(report) == (
        "the base main fails to build: model fct: Parser Error: nothing compared; "
        "this change built and its tests passed"
    )
    assert "models compared" not in code_change_report.markdown(report)
