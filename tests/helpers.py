"""Test helpers: an independent oracle over landing files, and warehouse snapshots."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from pathlib import Path

import duckdb

from refill.rules.catalog import Catalog, Dataset
from refill.rules.readiness import PART_GLOB, day_folder
from refill.sample_data import CURRENCIES, DATASET, MARKET_CURRENCY

STATUSES = {"captured", "refunded", "failed"}
# The data tests that check what an audit of their model checks on the same shadow (the
# start of the name dbt gives each -> the model, as a relation name): refill's builds of
# the model leave them out (DbtProject.audits_twins).
AUDITS_TWINS = {
    "unique_combination_fct_payments_transaction_id__event_date": "fct_payments",
    "reconciles_with_fct_payments_": "fct_payments",
    "not_null_fct_payments_amount_usd": "fct_payments",
    "reconciles_with_payments_quarantine_": "payments_quarantine",
    "matches_its_version_rules_fct_daily_revenue_v1_": "fct_daily_revenue_v1",
    "matches_its_version_rules_fct_daily_revenue_v2_": "fct_daily_revenue_v2",
}


def audits_twins_of(names: Iterable[str], models: Iterable[str]) -> set[str]:
    """Those of the test `names` that are twins of an audit of one of `models`."""
    models = set(models)
    return {
        name
        for name in names
        for start, model in AUDITS_TWINS.items()
        if name.startswith(start) and model in models
    }


# Consumer-facing relations and the ledger; lineage columns that differ by run are dropped
# when comparing builds (what a reader sees must be the same, not who wrote it).
COMPARED = {
    "main.fct_payments": "* exclude (_run_id)",
    "main.payments_quarantine": "* exclude (_run_id)",
    "main.fct_daily_revenue_v1": "* exclude (_run_id)",
    "main.fct_daily_revenue_v2": "* exclude (_run_id)",
    "ops.partition_ledger": "model_name, partition_date, status, code_version, "
    "source_fingerprint, reference_fingerprint, rows_written, source_records",
    "ops.data_as_of": "model_name, first_partition, data_as_of",
}

# What a dbt project copy needs (dbt_project.yml names the folders).
PROJECT_PARTS = ("dbt_project.yml", "profiles.yml", "models", "macros", "seeds", "data_tests")

# An armed fault seam for a test's own copy of the project (the product's seam is inert).
# REFILL_TEST_FAULT="<point>[:<model>]" makes the point fail with `select error(...)`;
# "<point>[:<model>]!<marker>" instead writes <marker> and then runs a query that does not
# end (a sum no optimizer can fold), so the test can kill the process while it is there.
ARMED_FAULT_POINT = """
{% macro refill_fault_point(point) %}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set raw = env_var('REFILL_TEST_FAULT', '') -%}
    {%- set spec, _, marker = raw.partition('!') -%}
    {%- set wanted, _, model = spec.partition(':') -%}
    {%- set here = this.identifier if this is defined and this is not none else 'publish' -%}
    {%- if wanted != point or (model and model != here) -%}{{ return('') }}{%- endif -%}
    {%- if marker -%}
        {{ return("copy (select 1 as reached) to '" ~ marker ~ "' (header false);"
            ~ " select sum(hash(i)) from range(1000000000000000) as a(i);") }}
    {%- endif -%}
    {{ return("select error('refill fault injected at " ~ point ~ " in " ~ here ~ "');") }}
{% endmacro %}
"""


@dataclass
class DayTruth:
    published: int = 0
    amount: Decimal = Decimal("0")
    duplicates: int = 0
    quarantined: int = 0
    payments: list[tuple[str, Decimal]] = field(
        default_factory=list
    )  # published (currency, amount)
    # published records (transaction_id, event_ts, amount, currency, market, status)
    records: list[tuple] = field(default_factory=list)
    # quarantined lines: (file name from the landing root, line number) -> the line's bytes
    # as kept (a final carriage return is not part of a line: the reader drops it)
    quarantined_lines: dict[tuple[str, int], bytes] = field(default_factory=dict)

    @property
    def lines(self) -> int:
        return self.published + self.duplicates + self.quarantined

    def amount_usd(self, day: date, rates: dict[tuple[date, str], Decimal]) -> Decimal:
        """The day's published USD at `rates` (fx_rates_of): each payment at its event day's
        rate, rounded to cents half away from zero, then summed."""
        return sum(
            (
                (amount * rates[(day, currency)]).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
                for currency, amount in self.payments
            ),
            Decimal("0"),
        )


def expected_day(landing: Path, day: date, currencies: Iterable[str] = CURRENCIES) -> DayTruth:
    """What a day should publish, computed from its files without refill's code (the one
    oracle: the tests and the fault harness read it). Over bytes: a line is what ends at a
    newline, and a line that is not valid UTF-8 is quarantined like any other bad line
    (the input boundary). `currencies`: the known ones (the fx seed's)."""
    truth = DayTruth()
    versions: dict[str, list[tuple]] = defaultdict(list)
    places: dict[str, list[tuple[tuple[str, int], bytes]]] = defaultdict(list)
    for part in sorted(day_folder(landing, DATASET, day).glob(PART_GLOB)):
        data = part.read_bytes()
        lines = data.split(b"\n")
        if data.endswith(b"\n") or not data:
            lines.pop()
        name = part.relative_to(landing).as_posix()
        for number, raw in enumerate(lines, start=1):
            try:
                record = _valid_record(raw.decode("utf-8"), day, frozenset(currencies))
            except UnicodeDecodeError:
                record = None
            if record is None:
                truth.quarantined += 1
                truth.quarantined_lines[(name, number)] = raw.removesuffix(b"\r")
            else:
                versions[record[0]].append(record)
                places[record[0]].append(((name, number), raw.removesuffix(b"\r")))
    for transaction_id, copies in versions.items():
        if len(set(copies)) > 1:
            truth.quarantined += len(copies)
            truth.quarantined_lines.update(places[transaction_id])
        else:
            truth.published += 1
            truth.duplicates += len(copies) - 1
            truth.amount += copies[0][2]
            truth.payments.append((copies[0][3], copies[0][2]))
            truth.records.append(copies[0])
    return truth


def kept_lines(
    warehouse: Path, day: date, landed: dict[tuple[str, int], bytes]
) -> dict[tuple[str, int], bytes]:
    """The day's quarantine as (file, line) -> the bytes its text stands for: a UTF-8 line's
    text as it is, a line that is not UTF-8 by its escaped form (`line_text::blob` gives the
    bytes back, as the landing contract says); `landed` says which lines are not UTF-8."""
    rows = query(
        warehouse,
        "select file_name, line_number, line_text, line_text::blob "
        "from main.payments_quarantine where landed_date = ?",
        [day],
    )
    kept = {}
    for file_name, line_number, text, as_blob in rows:
        raw = landed.get((file_name, line_number), b"")
        kept[(file_name, line_number)] = bytes(as_blob) if _not_utf8(raw) else text.encode()
    return kept


def _not_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _valid_record(line: str, day: date, currencies: frozenset[str]) -> tuple | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    try:
        tx, ts, amount = record["transaction_id"], record["event_ts"], record["amount"]
        currency, market, status = record["currency"], record["market"], record["status"]
    except KeyError:
        return None
    if not isinstance(tx, str) or not tx or not isinstance(ts, str):
        return None
    if isinstance(amount, bool) or not isinstance(amount, int | float):
        return None
    try:
        moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.date() != day or currency not in currencies:
        return None
    if market not in MARKET_CURRENCY or status not in STATUSES:
        return None
    cents = Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return (tx, ts, cents, currency, market, status)


# -- the fx seed, read and changed without refill's code -----------------------------------

FX_SEED = Path("seeds") / "fx_rates_daily.csv"
DBT_SEED_CHECKSUM_LIMIT = 1 << 20  # dbt keys a seed over 1 MiB by its path, not its bytes


def fx_rates_of(seed: Path) -> dict[tuple[date, str], Decimal]:
    """The seed's rates by (day, currency), as the oracle reads the CSV."""
    with seed.open(newline="") as handle:
        return {
            (date.fromisoformat(row["rate_date"]), row["currency"]): Decimal(row["usd_per_unit"])
            for row in csv.DictReader(handle)
        }


def grow_seed_past(seed: Path, size: int = DBT_SEED_CHECKSUM_LIMIT) -> None:
    """Append rates for days after the seed's last (2028 on), until the file is over `size`
    bytes: the landing's days and their rates are untouched."""
    last = max(day for day, _ in fx_rates_of(seed))
    rows, day = [], last
    written = seed.stat().st_size
    while written <= size:
        day += timedelta(days=1)
        for currency in CURRENCIES:
            row = f"{day.isoformat()},{currency},{1 if currency == 'USD' else 0.5:.6f}\n"
            rows.append(row)
            written += len(row)
    with seed.open("a", newline="") as handle:
        handle.write("".join(rows))


def set_fx_rate(seed: Path, day: date, currency: str, rate: Decimal) -> None:
    """Rewrite one rate of the seed in place (the file's other bytes unchanged)."""
    prefix = f"{day.isoformat()},{currency},"
    lines = seed.read_text().splitlines(keepends=True)
    (index,) = [n for n, line in enumerate(lines) if line.startswith(prefix)]
    lines[index] = f"{prefix}{rate:.6f}\n"
    seed.write_text("".join(lines))


def query(warehouse: Path, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return connection.execute(sql, params or []).fetchall()


# Everything a consumer can read: the published relations (tables and the versioned
# model's consumer view), the ledger and data-as-of, every column (lineage included).
CONSUMER_RELATIONS = (
    "main.fct_payments",
    "main.payments_quarantine",
    "main.fct_daily_revenue_v1",
    "main.fct_daily_revenue_v2",
    "main.fct_daily_revenue",
    "ops.partition_ledger",
    "ops.data_as_of",
)


def consumer_results(warehouse: Path) -> dict[str, list[tuple]]:
    return {
        relation: query(warehouse, f"select * from {relation} order by all")
        for relation in CONSUMER_RELATIONS
    }


def relation_exists(warehouse: Path, schema: str, name: str) -> bool:
    if not warehouse.exists():
        return False
    rows = query(
        warehouse,
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, name],
    )
    return rows[0][0] > 0


def snapshot(warehouse: Path, full: bool = False) -> dict[str, list[tuple]]:
    """Every compared relation's rows, sorted. `full` keeps the lineage columns too."""
    result = {}
    for relation, columns in COMPARED.items():
        schema, name = relation.split(".")
        if not relation_exists(warehouse, schema, name):
            result[relation] = None
            continue
        selected = "*" if full else columns
        result[relation] = query(warehouse, f"select {selected} from {relation} order by all")
    return result


def published_tables(warehouse: Path) -> dict[str, list[tuple]]:
    """Every table of `main` and the ledger, row by row: what a reader can see."""
    tables = query(
        warehouse,
        "select table_schema || '.' || table_name from information_schema.tables "
        "where (table_schema = 'main' and table_type = 'BASE TABLE') "
        "or (table_schema = 'ops' and table_name = 'partition_ledger') order by 1",
    )
    return {name: query(warehouse, f"select * from {name} order by all") for (name,) in tables}


def published_by_day(warehouse: Path) -> dict[date, tuple[int, Decimal]]:
    rows = query(
        warehouse,
        "select event_date, count(*), sum(amount) from main.fct_payments group by 1 order by 1",
    )
    return {day: (count, total) for day, count, total in rows}


def patched_project(source: Path, target: Path, files: dict[str, str]) -> Path:
    """A copy of the dbt project at `target` with `files` (relative path -> text) written
    over it: an armed fault seam, an extra data test. Returns the copy's folder."""
    target.mkdir(parents=True)
    for part in PROJECT_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part)
        elif (source / part).is_file():
            shutil.copy2(source / part, target / part)
    for relative, text in files.items():
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        (target / relative).write_text(text)
    return target


def typed_selection(select: str | None):
    """A dbt selection as a user types it, not resolve_selection's (no descendants added, no
    model's files named): a build of it leaves out no audit's twin. None: the whole project."""
    from refill.warehouse.dbt_runner import Selection

    return Selection(select, []) if select else None


def patched_dbt_project(files: dict[str, str]):
    """A DbtProject on a temporary patched copy of the product project (parsed on use)."""
    from refill.warehouse.dbt_runner import DbtProject

    copy = Path(tempfile.mkdtemp(prefix="refill-patched-")) / "project"
    return DbtProject(project_dir=patched_project(DbtProject().project_dir, copy, files))


@lru_cache(maxsize=1)
def armed_dbt_project():
    """The project with its fault seam armed by REFILL_TEST_FAULT (one copy per session)."""
    return patched_dbt_project({"macros/faults/refill_fault_point.sql": ARMED_FAULT_POINT})


def hold_lock_in_another_process(
    warehouse,
    seconds: float,
    priority="history",
    *,
    run_id: str = "holder-run",
    days: list[date] | None = None,
    per_day: bool = False,
):
    """A separate process that takes the lock, says so, and keeps it for `seconds`: the
    warehouse lock (DuckDB's one writer), or with `per_day` the day locks a Spark chunk's
    worker holds (`warehouse` is then the Spark warehouse folder). `days`: the partitions
    the holder says it builds, as the board reads them."""
    partitions = [str(day) for day in days] if days is not None else None
    lock = "partition_locks.partition_locks" if per_day else "locking.warehouse_lock"
    module = lock.partition(".")[0]
    take = (
        f"{lock}(Path({str(warehouse)!r}), run_id={run_id!r}, command='backfill', "
        f"priority={priority!r}, partitions={partitions!r})"
    )
    code = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from refill.warehouse import {module}
        with {take}:
            print("held", flush=True)
            time.sleep({seconds})
        """
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    return process


def file_checksum(path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


# The catalog the product's dbt project declares (models/marts/*/_*__models.yml meta.refill),
# for tests of the views that draw DayStatus values of their own.
PAYMENTS_CATALOG = Catalog(
    (
        Dataset(
            name="payments",
            facts_model="fct_payments",
            partition_column="event_date",
            totals_column="amount_usd",
            hours_column="event_ts",
            quarantine_model="payments_quarantine",
            primary=True,
        ),
    )
)


def shown_rows(stdout: str) -> list[dict]:
    """The rows `dbt show --output json --log-format json` printed."""
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        preview = event.get("data", {}).get("preview")
        if preview is not None:
            return json.loads(preview) if isinstance(preview, str) else preview
    raise AssertionError(f"no preview in dbt show's output:\n{stdout[-3000:]}")


def copy_workspace(template, into) -> None:
    """A test's landing and warehouse as a copy of a template's (tests/conftest.py's
    Workspace): a file of tests whose every test starts from the same published days builds
    them once. The warehouse holds no path of its own folder or of the landing, so a copy
    is the same warehouse; the landing's files keep their times."""
    shutil.copytree(template.landing, into.landing, dirs_exist_ok=True)
    shutil.copytree(template.warehouse.parent, into.warehouse.parent)
