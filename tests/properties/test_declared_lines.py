"""Property (declared lines): for any dataset a team declares and any lines it lands, the
rule refill derives from the declaration classifies every line as an independent oracle
does: published with the oracle's typed values, an identical replay counted once, every
version of a conflicting key quarantined, every other bad line quarantined with the first
reason in declared order.

Declarations: one to five fields (string, integer, float, decimal(p, s), date, timestamp,
boolean), any of them nullable but the key, a key of one or two fields (string, integer,
date, decimal), a JSON key other than the column's name, accepted values, a day checked on
a date field or on a timestamp in a time zone (UTC, a half-hour zone, a zone with summer
time), or none, and with or without an entity word. Lines: valid records, replays, other
versions of a key, and records with a field missing, null, of another JSON kind, off its
day, outside its type's range or its accepted values; lines that are not JSON, not an
object or not UTF-8.

The rule is refill_classify_landed_lines rendered as dbt renders it (plain Jinja, the
benchmark's bench.floor.rule_sql), run on DuckDB in a session whose time zone is not the
declared one. The oracle below is Python's json, decimal, datetime and zoneinfo.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from zoneinfo import ZoneInfo

import duckdb
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.floor import rule_sql

DAYS = [date(2026, 3, 28), date(2026, 3, 29)]  # summer time begins in Europe on the 29th
ZONES = ["Asia/Kolkata", "America/St_Johns", "Europe/Berlin", "UTC"]
SESSION_ZONE = "Pacific/Kiritimati"  # UTC+14: a session zone that would move most days
KEY_TYPES = ["string", "integer", "date", "decimal(10, 2)"]
TYPES = [
    "string",
    "integer",
    "float",
    "decimal(10, 2)",
    "decimal(6, 3)",
    "date",
    "timestamp",
    "boolean",
]
WORDS = ["station", "reading", "region", "kind", "level", "code", "visits", "rate", "seen", "flag"]
ACCEPTED = ["north", "south", "east", "west"]
NUMBER_KINDS = (int, float)


# -- declarations --------------------------------------------------------------------


@st.composite
def declarations(draw) -> dict:
    day_kind = draw(st.sampled_from(["timestamp", "date", None]))
    count = draw(st.integers(1, 5))
    names = draw(
        st.lists(st.sampled_from(WORDS), min_size=count + 1, max_size=count + 1, unique=True)
    )
    key_size = draw(st.integers(1, min(2, count)))
    fields = []
    for index, name in enumerate(names[:count]):
        in_key = index < key_size
        kind = draw(st.sampled_from(KEY_TYPES if in_key else TYPES))
        field = {"name": name, "type": kind}
        if draw(st.booleans()) and draw(st.booleans()):
            field["json_key"] = name.upper() + "_V"
        if not in_key and draw(st.booleans()):
            field["nullable"] = True
        if kind == "string" and draw(st.booleans()):
            field["accepted_values"] = ACCEPTED[: draw(st.integers(1, 4))]
        fields.append(field)
    declaration = {"key": names[:key_size]}
    if day_kind:
        # the day's field: a field of its own, or a date key
        candidates = [f for f in fields if f["type"] == day_kind and not f.get("nullable")]
        if candidates and draw(st.booleans()):
            day_field = draw(st.sampled_from(candidates))
        else:
            day_field = {"name": names[count], "type": day_kind}
            fields.append(day_field)
        zone = draw(st.sampled_from(ZONES)) if day_kind == "timestamp" else "UTC"
        declaration["day"] = {"field": day_field["name"], "time_zone": zone}
    declaration["fields"] = draw(st.permutations(fields))
    if draw(st.booleans()):
        declaration["entity"] = "record"
    return declaration


def zone_of(declaration: dict) -> str:
    return (declaration.get("day") or {}).get("time_zone", "UTC")


# -- lines ---------------------------------------------------------------------------


def valid_value(draw, field: dict, day: date, declaration: dict):
    """A JSON value the field accepts (on `day` when it is the day's field)."""
    kind = field["type"]
    if kind == "string":
        if "accepted_values" in field:
            return draw(st.sampled_from(field["accepted_values"]))
        return draw(st.text(min_size=1, max_size=6))
    if kind == "integer":
        return draw(st.integers(-(2**63), 2**63 - 1) | st.integers(-5, 5))
    if kind == "float":
        return draw(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-9, 9))
    if kind.startswith("decimal"):
        precision, scale = map(int, re.findall(r"\d+", kind))
        units = draw(st.integers(-(10 ** (precision - 1)) + 1, 10 ** (precision - 1) - 1))
        value = Decimal(units).scaleb(-scale)  # at most 9 digits: a double holds it exactly
        return int(value) if value == value.to_integral_value() else float(value)
    if kind == "boolean":
        return draw(st.booleans())
    on_day = (declaration.get("day") or {}).get("field") == field["name"]
    moment_day = day if on_day else draw(st.sampled_from(DAYS))
    if kind == "date":
        return moment_day.isoformat()
    return timestamp_text(draw, moment_day, zone_of(declaration) if on_day else "UTC")


def timestamp_text(draw, day: date, zone: str) -> str:
    """An ISO-8601 text of a moment on `day` in `zone`: with Z, an offset, or no zone (then
    read in the declared zone; hours kept off the small hours, where summer time begins)."""
    form = draw(st.sampled_from(["Z", "offset", "local"]))
    micro = draw(st.sampled_from([0, 0, 500000, 123456]))
    if form == "local":
        hour = draw(st.integers(4, 22))
        moment = datetime.combine(day, time(hour, draw(st.integers(0, 59)), 0, micro))
        return moment.isoformat()
    local = datetime.combine(
        day, time(draw(st.integers(0, 23)), draw(st.integers(0, 59)), 0, micro)
    )
    instant = local.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)
    if form == "Z":
        return instant.replace(tzinfo=None).isoformat() + "Z"
    offset = timedelta(minutes=draw(st.sampled_from([-210, -60, 0, 330, 600])))
    return instant.astimezone(timezone(offset)).isoformat()


def invalid_value(draw, field: dict, day: date, declaration: dict):
    """A JSON value the field refuses (off its day, out of range, another kind)."""
    kind = field["type"]
    choices = [None, [1], {"a": 1}]
    if kind == "string":
        choices += [5, True] + (
            [draw(st.sampled_from(["up", "North", "west "]))] if "accepted_values" in field else []
        )
        if field["name"] in declaration["key"]:
            choices.append("")
    elif kind == "integer":
        choices += ["7", 1.5, 2**63, True]
    elif kind in ("float",) or kind.startswith("decimal"):
        choices += ["7", True]
        if kind.startswith("decimal"):
            precision, scale = map(int, re.findall(r"\d+", kind))
            choices.append(10 ** (precision - scale))
    elif kind == "boolean":
        choices += ["true", 1]
    elif kind == "date":
        choices += ["2026-02-30", "2026-3-28", "28/03/2026", 20260328]
    else:
        choices += ["2026-03-28 10:00:00Z", "yesterday", "2026-13-01T00:00:00Z", 1774656000]
    if (declaration.get("day") or {}).get("field") == field["name"]:
        off = day + timedelta(days=draw(st.sampled_from([-1, 1])))
        choices.append(
            off.isoformat() if kind == "date" else timestamp_text(draw, off, zone_of(declaration))
        )
    return draw(st.sampled_from(choices))


@st.composite
def landings(draw, declaration: dict) -> list[tuple[date, str, int, str, bool]]:
    """Raw lines (landed_date, file_name, line_number, line_text, is_valid_utf8)."""
    lines = []
    for day in DAYS:
        records: list[dict] = []
        for _ in range(draw(st.integers(0, 6))):
            record = {
                f.get("json_key", f["name"]): valid_value(draw, f, day, declaration)
                for f in declaration["fields"]
            }
            records.append(record)
            roll = draw(st.integers(0, 9))
            if roll < 3:  # a replay
                records.append(dict(record))
            elif roll < 5:  # another version of its key
                other = dict(record)
                changed = draw(st.sampled_from(declaration["fields"]))
                json_key = changed.get("json_key", changed["name"])
                if changed["name"] not in declaration["key"]:
                    other[json_key] = valid_value(draw, changed, day, declaration)
                records.append(other)
            elif roll < 8:  # a bad field
                bad = dict(record)
                field = draw(st.sampled_from(declaration["fields"]))
                json_key = field.get("json_key", field["name"])
                if draw(st.booleans()) and draw(st.booleans()):
                    bad.pop(json_key)
                else:
                    bad[json_key] = invalid_value(draw, field, day, declaration)
                records.append(bad)
        texts = [
            json.dumps(r, ensure_ascii=draw(st.booleans())) for r in draw(st.permutations(records))
        ]
        for _ in range(draw(st.integers(0, 2))):
            texts.insert(
                draw(st.integers(0, len(texts))),
                draw(st.sampled_from(["{not json", "[1, 2]", '"text"', "42", "", "null"])),
            )
        if texts and draw(st.booleans()):
            texts[0] = "  " + texts[0]  # an object after blanks is still an object
        split = draw(st.integers(0, len(texts)))
        for name, part in (("part-0000.jsonl", texts[:split]), ("part-0001.jsonl", texts[split:])):
            for number, text in enumerate(part, start=1):
                valid_utf8 = draw(st.integers(0, 19)) > 0
                lines.append((day, f"ds/dt={day}/{name}", number, text, valid_utf8))
    return lines


# -- the oracle ----------------------------------------------------------------------


@dataclass
class Verdict:
    status: str
    reason: str | None = None
    values: tuple = ()


class Refused(Exception):
    pass


def typed(field: dict, value, day: date, declaration: dict, is_key: bool):
    """The field's typed value, or Refused with the rule's reason."""
    name, kind = field["name"], field["type"]
    if value is None:
        if field.get("nullable") and not is_key:
            return None
        raise Refused(f"{name} missing")
    if kind == "string":
        if not isinstance(value, str) or (is_key and value == ""):
            raise Refused(f"{name} is not a {'non-empty ' if is_key else ''}string")
        result = value
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int) or not -(2**63) <= value < 2**63:
            raise Refused(f"{name} is not an integer")
        result = value
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, NUMBER_KINDS):
            raise Refused(f"{name} is not a number")
        result = float(value)
    elif kind.startswith("decimal"):
        precision, scale = map(int, re.findall(r"\d+", kind))
        if isinstance(value, bool) or not isinstance(value, NUMBER_KINDS):
            raise Refused(f"{name} is not a number")
        try:
            result = Decimal(repr(value) if isinstance(value, float) else value).quantize(
                Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP
            )
        except InvalidOperation:
            raise Refused(f"{name} is not a number") from None
        if abs(result) >= Decimal(10) ** (precision - scale):
            raise Refused(f"{name} is not a number")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise Refused(f"{name} is not a boolean")
        result = value
    elif kind == "date":
        if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            raise Refused(f"{name} is not an ISO-8601 date")
        try:
            result = date.fromisoformat(value)
        except ValueError:
            raise Refused(f"{name} is not an ISO-8601 date") from None
    else:
        result = parsed_timestamp(name, value, zone_of(declaration))
    day_rule = declaration.get("day") or {}
    if day_rule.get("field") == name:
        local_day = (
            result
            if kind == "date"
            else (result.replace(tzinfo=UTC).astimezone(ZoneInfo(day_rule["time_zone"])).date())
        )
        if local_day != day:
            raise Refused(f"{name} {value} is not on the partition day")
    accepted = field.get("accepted_values")
    if accepted is not None and result not in accepted:
        raise Refused(f"unknown {name} {value}")
    return result


def parsed_timestamp(name: str, value, zone: str) -> datetime:
    """UTC, without a zone; a text without a zone is in `zone`."""
    if not isinstance(value, str) or not re.match(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", value):
        raise Refused(f"{name} is not an ISO-8601 timestamp")
    try:
        moment = datetime.fromisoformat(
            value.removesuffix("Z") + ("+00:00" if value.endswith("Z") else "")
        )
    except ValueError:
        raise Refused(f"{name} is not an ISO-8601 timestamp") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo(zone))
    return moment.astimezone(UTC).replace(tzinfo=None)


def oracle(declaration: dict, lines) -> dict[tuple[str, int], Verdict]:
    fields, key = declaration["fields"], declaration["key"]
    verdicts: dict[tuple[str, int], Verdict] = {}
    valid: dict[tuple, list[tuple[tuple[str, int], tuple]]] = {}
    for day, file_name, number, text, valid_utf8 in lines:
        place = (file_name, number)
        try:
            if not valid_utf8:
                raise Refused("not valid UTF-8")
            try:
                record = json.loads(text)
            except ValueError:
                raise Refused("not valid JSON") from None
            if not isinstance(record, dict):
                raise Refused("not a JSON object")
            values = tuple(
                typed(
                    f, record.get(f.get("json_key", f["name"])), day, declaration, f["name"] in key
                )
                for f in fields
            )
        except Refused as refused:
            verdicts[place] = Verdict("quarantined", str(refused))
            continue
        named = dict(zip([f["name"] for f in fields], values, strict=True))
        valid.setdefault((day, *[named[k] for k in key]), []).append((place, values))
    for (_, *key_values), copies in valid.items():
        compared = {
            tuple(
                _comparable(v) for f, v in zip(fields, values, strict=True) if f["name"] not in key
            )
            for _, values in copies
        }
        if len(compared) > 1:
            entity = declaration.get("entity") or ", ".join(key)
            shown = ", ".join(_shown(v) for v in key_values)
            for place, _ in copies:
                verdicts[place] = Verdict(
                    "quarantined", f"conflicting versions of {entity} {shown}"
                )
            continue
        first = min(place for place, _ in copies)
        for place, values in copies:
            verdicts[place] = Verdict("published" if place == first else "duplicate", None, values)
    return verdicts


def _comparable(value):
    """Typed values as DuckDB's hash tells them apart (-0.0 is 0.0)."""
    return 0.0 if isinstance(value, float) and value == 0 else value


def _shown(value) -> str:
    return value.isoformat() if isinstance(value, date) else str(value)


# -- the rule, as refill runs it -----------------------------------------------------


def classified(declaration: dict, lines) -> dict[tuple[str, int], Verdict]:
    sql = rule_sql("refill_classify_landed_lines", "raw_lines", declaration)
    names = ", ".join(f["name"] for f in declaration["fields"])
    with duckdb.connect() as connection:
        connection.execute(f"set TimeZone = '{SESSION_ZONE}'")
        connection.execute(
            "create table raw_lines (landed_date date, file_name varchar, line_number bigint, "
            "line_text varchar, is_valid_utf8 boolean)"
        )
        if lines:
            connection.executemany("insert into raw_lines values (?, ?, ?, ?, ?)", lines)
        rows = connection.execute(
            f"select file_name, line_number, line_status, quarantine_reason, {names} from ({sql})"
        ).fetchall()
    return {
        (file_name, number): Verdict(
            status, reason, tuple(values) if status != "quarantined" else ()
        )
        for file_name, number, status, reason, *values in rows
    }


def same_values(found: tuple, expected: tuple) -> bool:
    return all(
        (math.isclose(a, b, rel_tol=0, abs_tol=0) or a == b) if isinstance(b, float) else a == b
        for a, b in zip(found, expected, strict=True)
    )


@settings(max_examples=settings().max_examples * 4)
@given(st.data())
def test_every_line_is_classified_as_the_declaration_says(data):
    # GIVEN any declared dataset and any lines landed for it over two days
    declaration = data.draw(declarations(), label="declaration")
    lines = data.draw(landings(declaration), label="lines")

    # WHEN the rule derived from the declaration classifies them
    found = classified(declaration, lines)

    # THEN every line has the oracle's status and reason, and a published one its values
    expected = oracle(declaration, lines)
    assert found.keys() == expected.keys()
    for place, verdict in expected.items():
        got = found[place]
        assert (got.status, got.reason) == (verdict.status, verdict.reason), (place, lines)
        if verdict.status == "published":
            assert same_values(got.values, verdict.values), (place, got.values, verdict.values)
