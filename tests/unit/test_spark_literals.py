"""Spark has no bound parameters: every value the ops SQL binds becomes a typed, escaped
literal in one home (refill.warehouse.spark_literals). A hostile string can only ever be a
value; the round trip through a real Spark is in tests/spark/test_backfill_spark.py."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from refill.errors import RefillError
from refill.warehouse.spark_literals import literal, render, string_literal

HOSTILE = [
    "it's",
    "back\\slash",
    "ends with a backslash\\",
    "\\' or 1=1 --",
    "line\nbreak\r\nand\ttab",
    'double "quotes"',
    "'; drop table ops.partition_ledger; --",
    "? not a placeholder",
    "unicode é ✓",
]


def unescape(text: str) -> str:
    """How Spark reads a single-quoted literal's body (its escapes, docs/spark.md)."""
    assert text[0] == "'" and text[-1] == "'"
    body, out, index = text[1:-1], [], 0
    table = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "Z": "\x1a"}
    while index < len(body):
        char = body[index]
        if char == "\\":
            nxt = body[index + 1]
            out.append(table.get(nxt, nxt))
            index += 2
            continue
        assert char != "'", f"an unescaped quote ends the literal early: {text!r}"
        out.append(char)
        index += 1
    return "".join(out)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_string_reads_back_as_itself(value):
    rendered = string_literal(value)
    assert unescape(rendered) == value
    assert "\n" not in rendered and "\r" not in rendered


def test_a_nul_character_is_refused():
    with pytest.raises(RefillError, match="NUL"):
        string_literal("a\x00b")


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (42, "42"),
        (-3, "-3"),
        (2**31, "2147483648L"),
        (-(2**31), "-2147483648"),
        (1.5, "cast(1.5 as double)"),
        (Decimal("12.30"), "12.30BD"),
        (Decimal("-0.05"), "-0.05BD"),
        (date(2026, 1, 2), "date'2026-01-02'"),
        (datetime(2026, 1, 2, 3, 4, 5), "timestamp'2026-01-02 03:04:05.000000'"),
        # an aware timestamp is written in UTC (the session's zone)
        (
            datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2))),
            "timestamp'2026-01-02 01:04:05.000000'",
        ),
        (datetime(2026, 1, 2, tzinfo=UTC), "timestamp'2026-01-02 00:00:00.000000'"),
        ([date(2026, 1, 1), date(2026, 1, 2)], "array(date'2026-01-01', date'2026-01-02')"),
        (["a'b"], "array('a\\'b')"),
        ([], "array()"),
    ],
)
def test_each_type_has_its_typed_literal(value, expected):
    assert literal(value) == expected


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), Decimal("NaN"), object(), b"x", [object()], {"a": 1}]
)
def test_a_value_without_a_safe_literal_is_refused(value):
    with pytest.raises(RefillError):
        literal(value)


def test_placeholders_are_replaced_in_order_outside_quotes_and_comments():
    query = (
        "select '?', `a?b`, \"?\" -- a ? in a comment\n"
        "from t /* ? */ where x = ? and y = ? and z = 'it\\'s ?'"
    )
    rendered = render(query, ["o'k\\", date(2026, 1, 1)])
    assert rendered == (
        "select '?', `a?b`, `?` -- a ? in a comment\n"
        "from t /* ? */ where x = 'o\\'k\\\\' and y = date'2026-01-01' and z = 'it\\'s ?'"
    )


def test_a_standard_quoted_identifier_becomes_sparks_backquoted_one():
    # refill's portable SQL quotes manifest names as "name" (refill.warehouse.ops): Spark
    # reads that as a string, and a resumed backfill's plan failed on it (PARSE_SYNTAX_ERROR)
    rendered = render(
        'select "event_date", count(*) from main."fct_payments" where "a""b`c" = ?', ["x"]
    )
    assert rendered == (
        "select `event_date`, count(*) from main.`fct_payments` where `a\"b``c` = 'x'"
    )
    with pytest.raises(RefillError, match="unterminated quoted identifier"):
        render('select "open')


def test_placeholder_and_value_counts_must_match():
    with pytest.raises(RefillError, match="more placeholders"):
        render("select ?, ?", [1])
    with pytest.raises(RefillError, match="1 placeholder"):
        render("select ?", [1, 2])
    with pytest.raises(RefillError, match="unterminated"):
        render("select 'open ?", [1])
    assert render("select 1") == "select 1"
