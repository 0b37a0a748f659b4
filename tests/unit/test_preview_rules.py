"""refill.rules.preview: whether a preview may still be published, and its summary."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from refill.errors import RefillError
from refill.rules import preview as rules

DAY = date(2025, 3, 1)
NOW = datetime(2025, 4, 1, 12, tzinfo=UTC).replace(tzinfo=None)


def record(**changes) -> rules.PreviewRecord:
    fields = {
        "preview_id": "p0123456789ab",
        "run_id": "run-preview",
        "created_at": NOW - timedelta(hours=1),
        "expires_at": NOW + timedelta(days=6),
        "start": DAY,
        "end": DAY + timedelta(days=1),
        "models": ["fct_payments"],
        "chunks": [(DAY, DAY + timedelta(days=1))],
        "code_versions": {"fct_payments": "code-a"},
        "fingerprints": {
            rules.state_key("fct_payments", DAY): "fp-1",
            rules.state_key("fct_payments", DAY + timedelta(days=1)): "fp-2",
        },
        "published": {rules.state_key("fct_payments", DAY): ["run-old", "code-old"]},
        "references": {
            rules.state_key("fct_payments", DAY): "fx_rates_daily:aa,markets:bb",
            rules.state_key(
                "fct_payments", DAY + timedelta(days=1)
            ): "fx_rates_daily:cc,markets:bb",
        },
        "datasets": ["payments"],
    }
    return rules.PreviewRecord(**{**fields, **changes})


def unchanged() -> dict:
    return {
        "now": NOW,
        "code_versions": {"fct_payments": "code-a"},
        "current_fingerprints": {DAY: {"fp-1"}, DAY + timedelta(days=1): {"fp-2"}},
        "published": {rules.state_key("fct_payments", DAY): ["run-old", "code-old"]},
        "current_references": {
            DAY: ["fx_rates_daily:aa,markets:bb"],
            DAY + timedelta(days=1): ["fx_rates_daily:cc,markets:bb"],
        },
    }


def test_nothing_changed_may_be_published():
    assert rules.what_changed(record(), **unchanged()) is None


@pytest.mark.parametrize(
    "change, expected",
    [
        ({"now": NOW + timedelta(days=7)}, "preview p0123456789ab expired"),
        ({"code_versions": {"fct_payments": "code-b"}}, "the code of fct_payments changed"),
        (
            {"current_fingerprints": {DAY: {"fp-1"}, DAY + timedelta(days=1): {"fp-9"}}},
            "day 2025-03-02 was re-exported",
        ),
        (
            {
                "current_references": {
                    DAY: ["fx_rates_daily:aa,markets:bb"],
                    DAY + timedelta(days=1): ["fx_rates_daily:dd,markets:bb"],
                }
            },
            "fx_rates_daily changed for day 2025-03-02 since preview p0123456789ab",
        ),
        (
            {"published": {rules.state_key("fct_payments", DAY): ["run-daily", "code-a"]}},
            "day 2025-03-01 of fct_payments was published by run run-daily",
        ),
        (
            {
                "published": {
                    rules.state_key("fct_payments", DAY): ["run-old", "code-old"],
                    rules.state_key("fct_payments", DAY + timedelta(days=1)): ["run-d", "c"],
                }
            },
            "day 2025-03-02 of fct_payments was published by run run-d",
        ),
    ],
)
def test_what_changed_names_the_day_and_the_reason(change, expected):
    reason = rules.what_changed(record(), **{**unchanged(), **change})
    assert reason is not None and expected in reason and "\n" not in reason


def test_a_preview_id_is_checked_before_it_names_a_relation():
    assert rules.checked_preview_id("p0123456789ab") == "p0123456789ab"
    for bad in ["p0123", "x0123456789ab", "p0123456789ab; drop table x", ""]:
        with pytest.raises(RefillError, match="is not a preview id"):
            rules.checked_preview_id(bad)
    assert rules.PREVIEW_ID.fullmatch(rules.new_preview_id())


def test_expected_range_and_the_days_that_change_outside_it():
    assert rules.parse_expected_range(None) is None
    with pytest.raises(RefillError):
        rules.parse_expected_range("2025-03-01")
    report = rules.PreviewReport("p0123456789ab", DAY, DAY + timedelta(days=2))
    for offset, new in [(0, Decimal("10")), (1, Decimal("5")), (2, Decimal("7"))]:
        day = DAY + timedelta(days=offset)
        report.days.append(rules.Change(day, "fct_x", "", "total", 1, 1, Decimal("5"), new))
    report.expected = rules.parse_expected_range("2025-03-01..2025-03-01")
    assert report.days_changed == [DAY, DAY + timedelta(days=2)]
    assert report.days_unchanged == [DAY + timedelta(days=1)]
    assert report.unexpected == [DAY + timedelta(days=2)]
    assert [c.day for c in report.largest()] == [DAY, DAY + timedelta(days=2)]


def test_totals_by_key_and_month_count_one_version_only_for_every_measure():
    # GIVEN two versions of a keyed model, each with two measures on one key value
    keyed = rules.KeyedModel("mart", "region")
    report = rules.PreviewReport("p0123456789ab", DAY, DAY)
    for model, new in [("mart_v1", "12"), ("mart_v2", "99")]:
        report.keyed[model] = keyed
        for measure in ("sales", "orders"):
            report.by_key.append(
                rules.Change(DAY, model, "north", measure, 0, 0, Decimal("10"), Decimal(new))
            )

    # WHEN its totals per key and month are summed
    totals = report.totals_by_key_and_month(keyed)

    # THEN one version counts, once per measure, under the model's name
    assert [(t.model, t.month, t.key, t.measure, t.old, t.new) for t in totals] == [
        ("mart", "2025-03", "north", "orders", Decimal("10"), Decimal("12")),
        ("mart", "2025-03", "north", "sales", Decimal("10"), Decimal("12")),
    ]
    assert report.measures == ["sales", "orders"]
    assert report.as_json()["keys"] == {"mart_v1": "region", "mart_v2": "region"}


def test_a_chunk_checks_only_its_own_days_published_state():
    changed = {
        rules.state_key("fct_payments", DAY): ["run-old", "code-old"],
        rules.state_key("fct_payments", DAY + timedelta(days=1)): ["run-daily", "code-a"],
    }
    assert rules.published_state_changed(record(), changed, [DAY]) is None
    reason = rules.published_state_changed(record(), changed, [DAY + timedelta(days=1)])
    assert reason is not None and "day 2025-03-02 of fct_payments" in reason


def test_a_chunk_is_published_only_if_it_is_one_of_the_previews_and_not_published_yet():
    chunk = (DAY, DAY + timedelta(days=1))
    assert rules.what_changed(record(), **unchanged(), chunk=chunk) is None
    wider = rules.what_changed(record(), **unchanged(), chunk=(DAY - timedelta(days=3), chunk[1]))
    assert wider is not None and "is not a chunk of preview p0123456789ab" in wider
    done = rules.what_changed(record(published_chunks=[chunk]), **unchanged(), chunk=chunk)
    assert done is not None and "is published" in done


def test_a_change_to_any_day_still_to_publish_refuses_every_chunk_but_not_a_published_one():
    first, second = (DAY, DAY), (DAY + timedelta(days=1), DAY + timedelta(days=1))
    two_chunks = record(chunks=[first, second])
    reexported = {**unchanged(), "current_fingerprints": {DAY: {"fp-1"}, second[0]: {"fp-9"}}}
    # the second chunk's day changed: the first chunk is refused too, before it writes
    assert "was re-exported" in rules.what_changed(two_chunks, **reexported, chunk=first)
    # once the second chunk is published from the preview, its day is not checked again
    resumed = record(chunks=[first, second], published_chunks=[second])
    assert rules.what_changed(resumed, **reexported, chunk=first) is None


def test_a_corrected_rate_on_any_day_still_to_publish_refuses_every_chunk_but_not_a_published_one():
    first, second = (DAY, DAY), (DAY + timedelta(days=1), DAY + timedelta(days=1))
    corrected = {
        **unchanged(),
        "current_references": {
            DAY: ["fx_rates_daily:aa,markets:bb"],
            second[0]: ["fx_rates_daily:dd,markets:bb"],
        },
    }
    refused = rules.what_changed(record(chunks=[first, second]), **corrected, chunk=first)
    assert refused is not None and "fx_rates_daily changed for day 2025-03-02" in refused
    resumed = record(chunks=[first, second], published_chunks=[second])
    assert rules.what_changed(resumed, **corrected, chunk=first) is None


def test_a_publish_refuses_a_selection_that_is_not_the_previews_models():
    assert rules.selection_refused(record(), None, ["anything"]) is None
    assert rules.selection_refused(record(), "fct_payments+", ["fct_payments"]) is None
    refused = rules.selection_refused(record(), "payments_quarantine", ["payments_quarantine"])
    assert refused is not None and "kept fct_payments" in refused and "\n" not in refused
