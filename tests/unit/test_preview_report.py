"""The restatement preview's report speaks the declaration's words: its per-key tables are
headed by the versioned model's declared key, every declared measure that changes is shown
(not only the first), and amounts are labelled by their column, with no unit of refill's."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from refill.rules import preview as rules
from refill.views import preview_report

DAY = date(2025, 3, 1)
NOW = datetime(2025, 4, 1, 12, tzinfo=UTC).replace(tzinfo=None)
KEYED = rules.KeyedModel("daily_sales", "region")  # a key named otherwise than the example's


def record() -> rules.PreviewRecord:
    return rules.PreviewRecord(
        preview_id="p0123456789ab",
        run_id="run-preview",
        created_at=NOW - timedelta(hours=1),
        expires_at=NOW + timedelta(days=6),
        start=DAY,
        end=DAY,
        models=["fct_sales", "daily_sales_v2"],
        chunks=[(DAY, DAY)],
        code_versions={},
        fingerprints={},
        published={},
    )


def a_report() -> rules.PreviewReport:
    """One day: the facts' totals unchanged, the mart's first measure unchanged in one
    region and its second measure changed there."""
    report = rules.PreviewReport("p0123456789ab", DAY, DAY, facts_model="fct_sales")
    report.days.append(
        rules.Change(DAY, "fct_sales", "", "net", 4, 4, Decimal("10.00"), Decimal("10.00"))
    )
    report.keyed["daily_sales_v2"] = KEYED
    for measure, old, new in [("net", "10.00", "10.00"), ("orders", "4", "7")]:
        report.days.append(
            rules.Change(DAY, "daily_sales_v2", "", measure, 1, 1, Decimal(old), Decimal(new))
        )
        report.by_key.append(
            rules.Change(DAY, "daily_sales_v2", "north", measure, 0, 0, Decimal(old), Decimal(new))
        )
    return report


def test_the_report_is_headed_by_the_declared_key_and_shows_every_changed_measure():
    # GIVEN a preview whose only change is in a versioned model's second measure
    report = a_report()

    # WHEN it is rendered as text and as markdown
    text = preview_report.render(report, record())
    markdown = preview_report.markdown(report, record())

    # THEN the change is reported, on its day, under the measure's declared name
    assert report.days_changed == [DAY]
    assert f"per day and {KEYED.key_column} ({KEYED.name})" in text
    assert f"## total change by {KEYED.key_column} and month ({KEYED.name})" in markdown
    changed = [line for line in text.splitlines() if "north" in line and "orders" in line]
    assert changed, text
    # and the headline names what is compared, each amount by its column
    assert "(compared: rows, net, orders)" in text.splitlines()[0]
    # and the unchanged first measure is not listed per day and key (only changes are)
    per_day_and_key = [line for line in text.splitlines() if str(DAY) in line and "north" in line]
    assert {line.split()[3] for line in per_day_and_key} == {"orders"}, text


def test_the_json_names_the_key_and_every_measure():
    saved = a_report().as_json()

    assert saved["keys"] == {"daily_sales_v2": KEYED.key_column}
    assert saved["measures"] == ["net", "orders"]
    assert {(r["measure"], r["amount_change"]) for r in saved["by_key"]} == {
        ("net", Decimal(0)),
        ("orders", Decimal(3)),
    }
    assert [(t["key"], t["measure"]) for t in saved["by_key_and_month"]] == [
        ("north", "net"),
        ("north", "orders"),
    ]


def test_the_page_labels_the_amount_by_the_headline_models_measure():
    page = preview_report.page(a_report(), record())
    assert "<th>net old</th><th>net new</th>" in page
