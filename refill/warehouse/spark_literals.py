"""Spark SQL has no bound parameters: the one home where a Python value becomes Spark SQL text.

refill's ops SQL is written once, with `?` placeholders (DuckDB binds them). On Spark,
`render(query, parameters)` replaces each placeholder outside quotes and comments with a
typed literal of its value: a string is quoted with every character that Spark's literal
syntax reads specially escaped (Spark string literals read backslash escapes, so a
backslash is doubled before the quote is escaped), a date or a timestamp is a typed literal
built from the parsed value, a number is written from its type, never from a string. A value
of any other type is refused. Nothing here imports pyspark: the rules are tested alone.

The portable SQL quotes identifiers the standard way, `"name"` (column and model names from
the dbt manifest); Spark reads a double-quoted text as a string literal, so `render` turns
each one into Spark's quoted identifier, `` `name` ``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from refill.errors import RefillError

# Inside a Spark string literal these would be read as escapes or end the literal.
_ESCAPES = {
    "\\": "\\\\",
    "'": "\\'",
    '"': '\\"',
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\x1a": "\\Z",
}


def string_literal(text: str) -> str:
    """A Spark SQL string literal that reads back as exactly `text`."""
    if "\x00" in text:
        raise RefillError("a value holds a NUL character and cannot be used in Spark SQL")
    return "'" + "".join(_ESCAPES.get(char, char) for char in text) + "'"


def literal(value: Any) -> str:
    """The typed Spark SQL literal for one parameter value."""
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int
        return "true" if value else "false"
    if isinstance(value, int):
        number = int(value)
        # an INT literal where it fits (LIMIT takes no BIGINT); a BIGINT (`L`) beyond
        return str(number) if -(2**31) <= number < 2**31 else f"{number}L"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise RefillError(f"a parameter is not a finite number ({value!r})")
        return f"cast({float(value)!r} as double)"
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise RefillError(f"a parameter is not a finite number ({value!r})")
        # the digits come from the Decimal itself, never from a caller's text
        return f"{format(value, 'f')}BD"
    if isinstance(value, datetime):  # before date: a datetime is a date
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        # the session zone is UTC (the profile pins it): a naive timestamp is UTC
        return f"timestamp'{value.isoformat(sep=' ', timespec='microseconds')}'"
    if isinstance(value, date):
        return f"date'{value.isoformat()}'"
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, list | tuple):
        # an array of typed literals (a run's partitions_touched); an empty one takes the
        # column's type where it is inserted
        return "array(" + ", ".join(literal(item) for item in value) + ")"
    raise RefillError(f"a parameter of type {type(value).__name__} has no Spark SQL literal")


def render(query: str, parameters: Sequence[Any] | None = None) -> str:
    """`query` with each `?` placeholder (outside string literals, quoted names and comments)
    replaced by the literal of the next parameter; the counts must match."""
    values = list(parameters or ())
    pieces: list[str] = []
    used = 0
    index = 0
    length = len(query)
    while index < length:
        char = query[index]
        if char == '"':  # a standard quoted identifier: Spark's is backquoted
            end = _end_of_identifier(query, index)
            name = query[index + 1 : end - 1].replace('""', '"')
            pieces.append("`" + name.replace("`", "``") + "`")
            index = end
            continue
        if char in ("'", "`"):
            end = _end_of_quoted(query, index)
            pieces.append(query[index:end])
            index = end
            continue
        if query.startswith("--", index):
            end = query.find("\n", index)
            end = length if end < 0 else end
            pieces.append(query[index:end])
            index = end
            continue
        if query.startswith("/*", index):
            end = query.find("*/", index + 2)
            end = length if end < 0 else end + 2
            pieces.append(query[index:end])
            index = end
            continue
        if char == "?":
            if used >= len(values):
                raise RefillError(f"the query has more placeholders than {len(values)} value(s)")
            pieces.append(literal(values[used]))
            used += 1
        else:
            pieces.append(char)
        index += 1
    if used != len(values):
        raise RefillError(f"the query has {used} placeholder(s) for {len(values)} value(s)")
    return "".join(pieces)


def _end_of_identifier(query: str, start: int) -> int:
    """The index just past the double-quoted identifier opening at `start` (a doubled
    double quote inside stands for one; no backslash escapes in identifiers)."""
    index = start + 1
    while index < len(query):
        if query[index] == '"':
            if query.startswith('""', index):
                index += 2
                continue
            return index + 1
        index += 1
    raise RefillError("the query has an unterminated quoted identifier")


def _end_of_quoted(query: str, start: int) -> int:
    """The index just past the quoted text opening at `start` (Spark: backslash escapes
    inside string literals; a doubled quote also stands for one quote)."""
    quote = query[start]
    index = start + 1
    while index < len(query):
        char = query[index]
        if char == "\\" and quote != "`":
            index += 2
            continue
        if char == quote:
            if index + 1 < len(query) and query[index + 1] == quote:
                index += 2
                continue
            return index + 1
        index += 1
    raise RefillError("the query has an unterminated quoted text")
