"""Contender (c), the floor: bench/floor.sql on one DuckDB connection, for a date range.

    python -m bench.floor --landing DIR --warehouse FILE --start YYYY-MM-DD --end YYYY-MM-DD

What it does and skips relative to refill is written in docs/performance.md; in short,
the same reading, parsing, classification, dedup, fx join, replace and per-day checks,
without the Python readiness verdict (the manifest check is done in SQL), the ledger,
source fingerprints, code versions, run log, attempts, lock, chunks and Prefect.
"""

from __future__ import annotations

import argparse
import string
import time
from collections.abc import Mapping
from datetime import date, timedelta
from pathlib import Path

import duckdb
import yaml

from refill.rules.readiness import MANIFEST_NAME, PART_GLOB, day_folder
from refill.sample_data import DATASET

SCRIPT = Path(__file__).with_name("floor.sql")
REPO = Path(__file__).resolve().parent.parent
# refill's row rules (splitting files into lines, classifying them), each in its one home:
# the floor runs the same statements.
RULES = REPO / "macros" / "rules"


class _Placeholders(string.Template):
    delimiter = "@"  # `$` starts DuckDB's JSON paths


SEEDS = REPO / "seeds"
PROJECT_FILE = REPO / "dbt_project.yml"


def declared_rule(dataset: str, relations: Mapping[str, str]) -> dict:
    """The dataset's line rule as refill_classify_landed_lines takes it, from its one
    declaration (vars.refill_datasets in dbt_project.yml), each `accepted_in` reading the
    relation `relations` names for its ref: what the dbt project's refill_lines_rule
    gives, for a contender without dbt's context (the declaration is the example's, which
    refill_lines_rule accepts, so no check is repeated here)."""
    declared = yaml.safe_load(PROJECT_FILE.read_text())["vars"]["refill_datasets"][dataset]
    fields = []
    for field in declared["fields"]:
        field = dict(field)
        if "accepted_in" in field:
            accepted = field["accepted_in"]
            field["accepted_in"] = {
                "relation": relations[accepted["ref"]],
                "column": accepted.get("column", field["name"]),
            }
        fields.append(field)
    return {**declared, "fields": fields}


def rule_sql(macro: str, *args: object, rules: Path = RULES) -> str:
    """A row rule of macros/rules/ (or of another copy of them, `rules`) called with the
    arguments (strings, a rule's dict) as Jinja literals, rendered to SQL.

    Row rules are plain SQL and Jinja (no dbt context), so jinja2 renders them as dbt does."""
    import jinja2

    call = "{{ " + macro + "(" + ", ".join(repr(arg) for arg in args) + ") }}"
    source = (rules / f"{macro}.sql").read_text()
    return jinja2.Environment().from_string(source + call).render()


def render(landing: Path, start: date, end: date) -> str:
    """The script for one range: the window's files listed, so only its folders are read."""
    days = [start + timedelta(days=n) for n in range((end - start).days + 1)]
    folders = [day_folder(landing, DATASET, day).as_posix() for day in days]
    return _Placeholders(SCRIPT.read_text()).substitute(
        fx_seed=(SEEDS / "fx_rates_daily.csv").as_posix(),
        markets_seed=(SEEDS / "markets.csv").as_posix(),
        manifest_files=sql_list(f"{folder}/{MANIFEST_NAME}" for folder in folders),
        part_files=sql_list(f"{folder}/{PART_GLOB}" for folder in folders),
        landed_lines=rule_sql("refill_split_landed_lines", "files", landing.as_posix()),
        classified_lines=rule_sql(
            "refill_classify_landed_lines",
            "raw_lines",
            declared_rule(DATASET, {"markets": "markets", "fx_rates_daily": "fx_rates"}),
        ),
        start=start.isoformat(),
        end=end.isoformat(),
    )


def run(landing: Path, warehouse: Path, start: date, end: date) -> dict:
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    clock = time.monotonic()
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute(render(landing, start, end))
        rows = connection.execute(
            "select count(*) from fct_payments where event_date between ? and ?", [start, end]
        ).fetchone()[0]
    return {"rows": rows, "seconds": time.monotonic() - clock}


def sql_string(value) -> str:
    """A path or name as a SQL string literal (a quote doubled)."""
    return "'" + str(value).replace("'", "''") + "'"


def sql_list(values) -> str:
    return "[" + ", ".join(sql_string(value) for value in values) + "]"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--landing", type=Path, required=True)
    parser.add_argument("--warehouse", type=Path, required=True)
    parser.add_argument("--start", type=date.fromisoformat, required=True)
    parser.add_argument("--end", type=date.fromisoformat, required=True)
    args = parser.parse_args(argv)
    result = run(args.landing.resolve(), args.warehouse, args.start, args.end)
    print(f"floor: published {result['rows']} rows in {result['seconds']:.1f}s")


if __name__ == "__main__":
    main()
