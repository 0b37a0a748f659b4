"""refill.rules.reference: what a day reads of the seeds, and its fingerprint."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from refill.errors import RefillError
from refill.rules.reference import changed_seeds, parse_reads, window_fingerprints

MARCH_30, APRIL_1, APRIL_2 = date(2025, 3, 30), date(2025, 4, 1), date(2025, 4, 2)
DAYS = [MARCH_30 + timedelta(days=n) for n in range(4)]  # March 30 .. April 2
HEADER = "rate_date,currency,usd_per_unit\n"


def rates_file(folder: Path, rows: list[str]) -> Path:
    path = folder / "fx.csv"
    path.write_text(HEADER + "".join(f"{row}\n" for row in rows))
    return path


def rows_of(days=DAYS, currencies=("USD", "EUR")) -> list[str]:
    return [f"{day},{c},{1 if c == 'USD' else 1.1:.6f}" for day in days for c in currencies]


def reads(path: Path, *entries: dict):
    seeds = {"fx": {"id": "seed.refill.fx", "file": str(path)}}
    return parse_reads(list(entries), seeds, "fct_x")


def fingerprints(path: Path, *entries: dict) -> dict[date, str]:
    return window_fingerprints(reads(path, *entries), DAYS[0], DAYS[-1])[0]


def changed_days(tmp_path, before: list[str], after: list[str], *entries: dict) -> list[date]:
    path = rates_file(tmp_path, before)
    old = fingerprints(path, *entries)
    rates_file(tmp_path, after)
    new = fingerprints(path, *entries)
    return [day for day in DAYS if old[day] != new[day]]


DAY_READ = {"seed": "fx", "day": "rate_date"}
MONTH_READ = {"seed": "fx", "month": "rate_date"}
CURRENCY_SET = {"seed": "fx", "distinct": ["currency"]}


def test_a_changed_rate_changes_the_day_that_reads_it_by_day(tmp_path):
    rows = rows_of()
    changed = [
        row.replace("1.100000", "1.200000") if row.startswith(str(APRIL_1)) else row for row in rows
    ]
    # by day: that day only; by month: every day of its month; the currency set: none
    assert changed_days(tmp_path, rows, changed, DAY_READ) == [APRIL_1]
    assert changed_days(tmp_path, rows, changed, MONTH_READ) == [APRIL_1, APRIL_2]
    assert changed_days(tmp_path, rows, changed, CURRENCY_SET) == []


def test_a_new_currency_changes_every_day_through_the_currency_set(tmp_path):
    rows = rows_of()
    added = rows + [f"{day},CHF,1.130000" for day in DAYS]
    assert changed_days(tmp_path, rows, added, CURRENCY_SET) == DAYS
    # and a day's rate rows are other rows too: every day that has one
    assert changed_days(tmp_path, rows, added, DAY_READ) == DAYS


def test_order_and_line_endings_are_not_content_but_a_repeated_row_is(tmp_path):
    rows = rows_of()
    assert (
        changed_days(tmp_path, rows, list(reversed(rows)), DAY_READ, MONTH_READ, CURRENCY_SET) == []
    )
    # a repeated rate row joins each payment twice: the day's input changed
    assert changed_days(tmp_path, rows, rows + [rows[0]], DAY_READ) == [MARCH_30]


def test_a_row_whose_day_cannot_be_told_is_read_by_every_day(tmp_path):
    rows = rows_of()
    assert changed_days(tmp_path, rows, rows + ["2025-4-1,GBP,1.270000"], DAY_READ) == DAYS
    assert changed_days(tmp_path, rows, rows + ["2025-02-30,GBP,1.270000"], MONTH_READ) == DAYS


def test_crlf_line_endings_read_as_the_same_rows(tmp_path):
    path = rates_file(tmp_path, rows_of())
    lf = fingerprints(path, DAY_READ, CURRENCY_SET)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert fingerprints(path, DAY_READ, CURRENCY_SET) == lf


def test_a_file_that_is_not_the_one_loaded_is_refused_naming_the_seed(tmp_path):
    path = rates_file(tmp_path, rows_of())
    declared = reads(path, DAY_READ)
    _, contents = window_fingerprints(declared, APRIL_1, APRIL_1)
    assert window_fingerprints(declared, APRIL_1, APRIL_1, loaded=contents)[1] == contents
    for loaded in ({}, {"seed.refill.fx": None}, {"seed.refill.fx": "0" * 64}):
        with pytest.raises(RefillError, match=r"seed fx changed since it was loaded"):
            window_fingerprints(declared, APRIL_1, APRIL_1, loaded=loaded)


def test_a_dataset_that_declares_nothing_reads_nothing():
    assert window_fingerprints((), APRIL_1, APRIL_2) == ({APRIL_1: "", APRIL_2: ""}, {})


@pytest.mark.parametrize(
    "entries, message",
    [
        ({"seed": "fx"}, "needs exactly one of day, month or distinct"),
        ({"seed": "fx", "day": "rate_date", "month": "rate_date"}, "exactly one of"),
        ({"seed": "fx", "week": "rate_date"}, "exactly one of"),
        ({"seed": "rates", "day": "rate_date"}, "'rates' is not a seed of the project"),
        ({"seed": "fx", "distinct": []}, "distinct names no column"),
        ("fx", r"reference\[0\] is not \{seed"),
    ],
)
def test_a_declaration_that_cannot_be_read_is_refused_naming_the_model(tmp_path, entries, message):
    with pytest.raises(RefillError, match=message) as refused:
        reads(rates_file(tmp_path, rows_of()), entries)
    assert str(refused.value).startswith("model fct_x: meta.refill.reference")


def test_a_declared_column_the_seed_does_not_have_is_refused(tmp_path):
    path = rates_file(tmp_path, rows_of())
    with pytest.raises(RefillError, match="seed fx has no column 'rate_day'"):
        fingerprints(path, {"seed": "fx", "day": "rate_day"})


def test_changed_seeds_names_each_seed_whose_part_differs():
    assert changed_seeds("fx:a,mk:b", "fx:a,mk:b") == ()
    assert changed_seeds("fx:a,mk:b", "fx:c,mk:b") == ("fx",)
    assert changed_seeds(None, "fx:a,mk:b") == ("fx", "mk")
    assert changed_seeds(None, "") == ()


def test_the_spark_engines_reference_request_gives_each_days_fingerprint_and_the_files_sha(
    tmp_path, capsys
):
    """What spark__refill_landed_reference asks the engine's script transformation: one
    tab-separated request row carrying the declaration (refill_dataset_reference's JSON)."""
    import hashlib
    import json

    from refill.warehouse import spark_readiness

    path = rates_file(tmp_path, rows_of())
    declared = {
        "dataset": "payments",
        "model": "fct_x",
        "reads": [DAY_READ, MONTH_READ],
        "seeds": {"fx": {"id": "seed.refill.fx", "file": str(path)}},
    }
    request = ["reference", json.dumps(declared), str(DAYS[0]), str(DAYS[-1]), ""]
    assert spark_readiness.main(["\t".join(request) + "\n"]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    expected = fingerprints(path, DAY_READ, MONTH_READ)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert [(date.fromisoformat(day), json.loads(payload)) for day, payload in lines] == [
        (day, {"reference_fingerprint": expected[day], "seed_contents": f"seed.refill.fx={sha}"})
        for day in DAYS
    ]
    # a declaration the seed cannot answer: one row whose `error` the SQL raises, naming it
    declared["reads"] = [{"seed": "fx", "day": "no_such_column"}]
    request[1] = json.dumps(declared)
    spark_readiness.main(["\t".join(request) + "\n"])
    ((day, payload),) = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert "no column 'no_such_column'" in json.loads(payload)["error"]
