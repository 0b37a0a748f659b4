"""The row rule's own cost: the staging statement (refill's line split and classification
over the range's part files) against one `read_json` of the same files, each in a process
of its own on a fresh DuckDB file, and the same statement with the rules of an earlier
revision (`--row-rule-baseline`), so a change to macros/rules/ is measured side by side.

    python -m bench.row_rule --landing DIR --database FILE --start D --end D [--rules DIR]
    python -m bench.row_rule ... --read-json

The statement is what stg_payments__lines builds (the rules rendered as bench/floor.py
renders them), written to a table; read_json is what the plain microbatch (e) reads.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb

from bench import floor
from refill.rules.readiness import PART_GLOB, day_folder
from refill.sample_data import DATASET

RULE_NAMES = ("refill_split_landed_lines", "refill_classify_landed_lines")
# Before the line rule was derived from a dataset's declaration, payments had a rule of its
# own: a baseline at such a revision runs that one, so the two are measured side by side.
PAYMENTS_RULE = "refill_classify_payment_lines"


def rules_at(repo: Path, revision: str, into: Path) -> Path:
    """The row rules (macros/rules/*.sql) as they were at `revision`, written under `into`."""
    into.mkdir(parents=True, exist_ok=True)
    for name in (*RULE_NAMES, PAYMENTS_RULE):
        shown = subprocess.run(
            ["git", "show", f"{revision}:macros/rules/{name}.sql"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=30,
        )
        if shown.returncode == 0:
            (into / f"{name}.sql").write_text(shown.stdout)
    return into


def _part_files(landing: Path, start: date, end: date) -> list[str]:
    days = [start + timedelta(days=n) for n in range((end - start).days + 1)]
    return [(day_folder(landing, DATASET, day) / PART_GLOB).as_posix() for day in days]


def staging_sql(landing: Path, start: date, end: date, rules: Path) -> str:
    split = floor.rule_sql("refill_split_landed_lines", "files", landing.as_posix(), rules=rules)
    if (rules / f"{PAYMENTS_RULE}.sql").exists():
        classify = floor.rule_sql(PAYMENTS_RULE, "raw_lines", "markets", "currencies", rules=rules)
    else:
        relations = {"markets": "markets", "fx_rates_daily": "currencies"}
        rule = floor.declared_rule(DATASET, relations)
        classify = floor.rule_sql("refill_classify_landed_lines", "raw_lines", rule, rules=rules)
    markets = floor.sql_string(floor.SEEDS / "markets.csv")
    fx_rates = floor.sql_string(floor.SEEDS / "fx_rates_daily.csv")
    part_files = floor.sql_list(_part_files(landing, start, end))
    return f"""
        create table markets as select * from read_csv({markets});
        create table currencies as select distinct currency from read_csv({fx_rates});
        create table lines as
        with files as (select filename, content from read_blob({part_files})),
        raw_lines as ({split}),
        classified as ({classify})
        select * from classified;
    """


def read_json_sql(landing: Path, start: date, end: date) -> str:
    return f"""
        create table lines as
        select * from read_json(
            {floor.sql_list(_part_files(landing, start, end))},
            format = 'newline_delimited',
            ignore_errors = true,
            hive_partitioning = true,
            columns = {{
                transaction_id: 'varchar', event_ts: 'timestamp', amount: 'decimal(18, 2)',
                currency: 'varchar', market: 'varchar', status: 'varchar'
            }}
        );
    """


def run(database: Path, sql: str) -> tuple[int, float]:
    """Run the statement on a fresh file in a UTC session; the lines written, the seconds."""
    database.parent.mkdir(parents=True, exist_ok=True)
    database.unlink(missing_ok=True)
    clock = time.monotonic()
    with duckdb.connect(str(database)) as connection:
        connection.execute("set TimeZone = 'UTC'")
        connection.execute(sql)
        lines = connection.execute("select count(*) from lines").fetchone()[0]
    return lines, time.monotonic() - clock


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--landing", type=Path, required=True)
    parser.add_argument("--database", type=Path, required=True)
    parser.add_argument("--start", type=date.fromisoformat, required=True)
    parser.add_argument("--end", type=date.fromisoformat, required=True)
    parser.add_argument("--rules", type=Path, default=floor.RULES, help="macros/rules to use")
    parser.add_argument("--read-json", action="store_true", help="read_json instead of the rule")
    args = parser.parse_args(argv)
    landing = args.landing.resolve()
    sql = (
        read_json_sql(landing, args.start, args.end)
        if args.read_json
        else staging_sql(landing, args.start, args.end, args.rules)
    )
    lines, seconds = run(args.database, sql)
    print(f"row rule: {lines} lines in {seconds:.2f}s")


if __name__ == "__main__":
    main()
