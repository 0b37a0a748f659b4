"""A team's own dataset, declared in YAML: a shape nobody here chose (station readings: a
key of two fields, a string and an integer; days in America/Chicago, across the start of
summer time; nullable float and integer measures; no currency, no market) goes through
plain dbt as a dbt user types it. The staging models are the same few lines as payments'
with the dataset's name; the line rule is derived from the declaration, with no framework
edit. What the dataset's lines become is compared with the independent oracle of the
declared-lines property (tests/properties/test_declared_lines.py)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml

from harness.overlay import copy_project
from refill import settings
from refill.rules.window import window_vars
from refill.sample_data import write_landed_day
from tests.helpers import query, shown_rows
from tests.properties.test_declared_lines import oracle

DATASET = "readings"
DAYS = [date(2026, 3, 7), date(2026, 3, 8)]  # summer time begins in Chicago on the 8th
ZONE = "America/Chicago"
DECLARATION = {
    "key": ["station_id", "seq"],
    "day": {"field": "observed_at", "time_zone": ZONE},
    "entity": "reading",
    "fields": [
        {"name": "station_id", "type": "string", "json_key": "station"},
        {"name": "seq", "type": "integer"},
        {"name": "observed_at", "type": "timestamp"},
        {"name": "reading", "type": "float", "nullable": True},
        {"name": "visits", "type": "integer", "nullable": True},
        {"name": "kind", "type": "string", "accepted_values": ["rain", "snow", "sun"]},
    ],
}
SOURCES = """
version: 2

sources:
  - name: readings
    description: A weather network's station readings, one JSON object per line.
    tables:
      - name: manifests
      - name: part_files
"""
FACTS = """
{{
    config(
        partition_column='observed_on',
        post_hook=[
            "{{ refill_audit_unique_in_window(['station_id', 'seq', 'observed_on']) }}",
            "{{ refill_audit_reconciles(
                source_model='stg_readings__lines',
                source_partition_column='landed_date',
                source_where=\\"line_status = 'published'\\",
                measures={'readings': 'count(*)'}) }}",
            "{{ refill_audit_line_accounting() }}",
            "{{ refill_record_partitions() }}",
        ],
    )
}}
-- depends_on: {{ refill_lineage_ref('stg_readings__manifests') }}

with lines as (
    select * from {{ ref('stg_readings__lines') }}
),

final as (
    select
        station_id,
        seq,
        landed_date as observed_on,
        observed_at,
        reading,
        visits,
        kind,
        {{ refill_string_literal(refill_run_id()) }} as _run_id
    from lines
    where line_status = 'published' and {{ refill_window_predicate('landed_date') }}
)

select * from final
"""
FACTS_YML = """
version: 2

models:
  - name: fct_readings
    description: One row per station reading, on its local (America/Chicago) day.
    config:
      meta:
        refill: {dataset: readings, role: facts, totals: reading}
"""


def readings_project(root: Path, declaration: dict) -> Path:
    """The product's project with the readings dataset declared and modelled: YAML and the
    staging models' SQL with the dataset's name, no framework file changed."""
    project = root / "project"
    copy_project(settings.PACKAGE_PROJECT_DIR, project)
    config = yaml.safe_load((project / "dbt_project.yml").read_text())
    config["vars"]["refill_datasets"][DATASET] = declaration
    (project / "dbt_project.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    staging, marts = project / "models/staging/readings", project / "models/marts/readings"
    staging.mkdir(parents=True)
    marts.mkdir(parents=True)
    for name in ("manifests", "raw_lines", "lines"):
        sql = (project / f"models/staging/payments/stg_payments__{name}.sql").read_text()
        # payments' days read two seeds (its facts declare them as reference data); the
        # readings read none, so their gate names no seed
        sql = "\n".join(
            line
            for line in sql.splitlines()
            if "ref('fx_rates_daily')" not in line and "ref('markets')" not in line
        )
        (staging / f"stg_{DATASET}__{name}.sql").write_text(sql.replace("payments", DATASET))
    (staging / "_readings__sources.yml").write_text(textwrap.dedent(SOURCES))
    (marts / "fct_readings.sql").write_text(textwrap.dedent(FACTS).lstrip())
    (marts / "_readings__models.yml").write_text(textwrap.dedent(FACTS_YML))
    return project


def day_lines(day: date, rng: random.Random) -> list[str]:
    """A day of readings as an exporter sends it: replays, a conflicting version, bad lines
    of every kind the declaration refuses, moments around the local midnights."""
    local = ZoneInfo(ZONE)
    lines = []
    for seq in range(40):
        hour = rng.choice([0, 1, 4, 12, 22, 23])
        moment = datetime(day.year, day.month, day.day, hour, rng.randrange(60), tzinfo=local)
        record = {
            "station": f"st-{seq % 7}",
            "seq": seq,
            "observed_at": moment.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "reading": rng.choice([None, round(rng.uniform(-40, 40), 3), 0]),
            "kind": rng.choice(["rain", "snow", "sun"]),
        }
        if rng.random() < 0.5:
            record["visits"] = rng.choice([None, rng.randrange(1000)])
        lines.append(json.dumps(record))
        roll = rng.random()
        if roll < 0.1:
            lines.append(json.dumps(record))  # a replay
        elif roll < 0.15:
            lines.append(
                json.dumps({**record, "kind": "snow" if record["kind"] != "snow" else "sun"})
            )
        elif roll < 0.35:
            broken = dict(record)
            field, value = rng.choice(
                [
                    ("seq", "7"),
                    ("station", ""),
                    ("reading", "warm"),
                    ("visits", 2.5),
                    ("kind", "hail"),
                    ("observed_at", f"{day}T12:00:00"),  # local noon: on the day
                    ("observed_at", f"{day - timedelta(days=1)}T23:30:00"),  # the day before
                    ("observed_at", f"{day}T05:30:00Z"),  # 23:30 or 00:30 local: near midnight
                ]
            )
            broken[field] = value
            lines.append(json.dumps(broken))
    lines += ["{cut off", "[]"]
    rng.shuffle(lines)
    return lines


def land(landing: Path) -> list[tuple]:
    """Land both days in two part files each; the raw lines as the reader numbers them."""
    rng = random.Random(35)
    raw = []
    for day in DAYS:
        lines = day_lines(day, rng)
        parts = [lines[: len(lines) // 2], lines[len(lines) // 2 :]]
        write_landed_day(landing, day, parts, dataset=DATASET)
        for index, part in enumerate(parts):
            name = f"{DATASET}/dt={day}/part-{index:04d}.jsonl"
            raw += [(day, name, n, text, True) for n, text in enumerate(part, start=1)]
    return raw


def dbt(project: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).with_name("dbt")), *args, "--no-use-colors"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def published_nothing(warehouse: Path) -> bool:
    """No fct_readings relation was created (or no warehouse file at all)."""
    return not warehouse.exists() or query(
        warehouse,
        "select count(*) from information_schema.tables where table_name = 'fct_readings'",
    ) == [(0,)]


def build(project: Path, window: str, env: dict) -> subprocess.CompletedProcess:
    """`dbt build` of the dataset's models for a window, as a dbt user types it."""
    return dbt(project, "build", "--select", "+fct_readings", "--vars", window, env=env)


@pytest.fixture
def readings(tmp_path: Path) -> tuple[Path, dict, list[tuple]]:
    project = readings_project(tmp_path, DECLARATION)
    landing = tmp_path / "landing"
    raw = land(landing)
    (tmp_path / "warehouse").mkdir()
    env = {
        **os.environ,
        "REFILL_LANDING": str(landing),
        "REFILL_WAREHOUSE": str(tmp_path / "warehouse" / "refill.duckdb"),
        "DBT_PROFILES_DIR": str(project),
        "DBT_TARGET_PATH": str(tmp_path / "target"),
        "DBT_LOG_PATH": str(tmp_path / "logs"),
    }
    return project, env, raw


def test_a_declared_dataset_builds_shows_and_tests_with_plain_dbt(readings):
    project, env, raw = readings
    warehouse = Path(env["REFILL_WAREHOUSE"])
    expected = oracle(DECLARATION, raw)
    window = json.dumps(window_vars(DAYS[0], DAYS[-1]))

    # WHEN a dbt user builds the dataset's models for the window (no payments landed: a
    # selection reads only its own datasets)
    built = build(project, window, env)

    # THEN it builds, and every landed line is classified as the oracle says
    assert built.returncode == 0, built.stdout[-3000:]
    lines = query(
        warehouse,
        "select file_name, line_number, line_status, quarantine_reason "
        "from staging.stg_readings__lines",
    )
    assert {(f, n): (s, r) for f, n, s, r in lines} == {
        place: (verdict.status, verdict.reason) for place, verdict in expected.items()
    }
    statuses = {verdict.status for verdict in expected.values()}
    assert statuses == {"published", "duplicate", "quarantined"}  # the landing has each kind
    # AND the facts hold exactly the oracle's published readings, on their local day
    published = {
        (v.values[0], v.values[1]): v.values for v in expected.values() if v.status == "published"
    }
    facts = query(
        warehouse,
        "select station_id, seq, observed_at, reading, visits, kind, observed_on "
        "from main.fct_readings",
    )
    assert {(row[0], row[1]): row[:6] for row in facts} == published
    for row in facts:  # observed_at is UTC; its day in the declared zone is the partition
        assert row[2].replace(tzinfo=UTC).astimezone(ZoneInfo(ZONE)).date() == row[6]
    # AND each day's ledger row counts every landed line
    ledger = query(
        warehouse,
        "select partition_date, rows_written, source_records from ops.partition_ledger "
        "where model_name = 'fct_readings' order by 1",
    )
    published_per_day = {
        day: sum(
            1 for (name, _), v in expected.items() if v.status == "published" and f"={day}/" in name
        )
        for day in DAYS
    }
    landed_per_day = {day: sum(1 for line in raw if line[0] == day) for day in DAYS}
    assert ledger == [(day, published_per_day[day], landed_per_day[day]) for day in DAYS]

    # WHEN the first day alone is shown and tested, after the window's build (staging holds
    # both days): the lines are computed from the landing for that day
    first = json.dumps(window_vars(DAYS[0], DAYS[0]))
    shown = dbt(
        project,
        "show",
        "--select",
        "stg_readings__lines",
        "--vars",
        first,
        "--limit",
        "1000",
        "--output",
        "json",
        "--log-format",
        "json",
        env=env,
    )
    assert shown.returncode == 0, shown.stdout[-3000:]
    assert {(row["file_name"], row["line_number"]) for row in shown_rows(shown.stdout)} == {
        place for place in expected if f"={DAYS[0]}/" in place[0]
    }
    tested = dbt(project, "test", "--select", "fct_readings", "--vars", first, env=env)
    assert tested.returncode == 0, tested.stdout[-3000:]


def test_a_declaration_refused_says_which_entry_and_writes_nothing(tmp_path):
    # GIVEN the readings declared with a type refill does not know
    declaration = {
        **DECLARATION,
        "fields": [*DECLARATION["fields"][:-1], {"name": "kind", "type": "money"}],
    }
    project = readings_project(tmp_path, declaration)
    landing = tmp_path / "landing"
    land(landing)
    warehouse = tmp_path / "warehouse" / "refill.duckdb"
    warehouse.parent.mkdir()
    env = {
        **os.environ,
        "REFILL_LANDING": str(landing),
        "REFILL_WAREHOUSE": str(warehouse),
        "DBT_PROFILES_DIR": str(project),
        "DBT_TARGET_PATH": str(tmp_path / "target"),
    }

    # WHEN the dataset is built
    window = json.dumps(window_vars(DAYS[0], DAYS[-1]))
    built = build(project, window, env)

    # THEN it fails naming the dataset, the field and what a type may be; nothing published
    assert built.returncode != 0
    assert (
        "refill declaration of readings (vars.refill_datasets.readings, dbt_project.yml): "
        "field kind: type 'money' is not one of"
    ) in built.stdout
    assert published_nothing(warehouse)


def test_a_declared_dataset_compiles_lists_and_is_refused_a_day_not_landed(readings):
    project, env, raw = readings
    warehouse = Path(env["REFILL_WAREHOUSE"])
    late = DAYS[-1] + timedelta(days=1)  # a third day, not landed yet
    window = json.dumps(window_vars(DAYS[0], late))

    # WHEN a dbt user compiles and lists the dataset's models (no window, no build yet)
    compiled = dbt(project, "compile", "--select", "stg_readings__lines", env=env)
    listed = dbt(project, "ls", "--select", "+fct_readings", "--resource-type", "model", env=env)

    # THEN both work, and the dataset's lineage holds its own models only
    assert compiled.returncode == 0, compiled.stdout[-3000:]
    assert listed.returncode == 0, listed.stdout[-3000:]
    models = {
        line.rsplit(".", 1)[-1] for line in listed.stdout.split() if line.startswith("refill.")
    }
    assert models == {
        "stg_readings__manifests",
        "stg_readings__raw_lines",
        "stg_readings__lines",
        "fct_readings",
    }

    # WHEN a window whose last day has not landed is built
    refused = build(project, window, env)

    # THEN it is refused naming the day, and nothing of the dataset is published
    assert refused.returncode != 0
    assert str(late) in refused.stdout
    assert published_nothing(warehouse)

    # WHEN the day lands and the user runs the same build again
    late_lines = [day_lines(late, random.Random(7))]
    write_landed_day(Path(env["REFILL_LANDING"]), late, late_lines, dataset=DATASET)
    rebuilt = build(project, window, env)

    # THEN the window is built: every landed day has its ledger row
    assert rebuilt.returncode == 0, rebuilt.stdout[-3000:]
    ledger = query(
        warehouse,
        "select partition_date from ops.partition_ledger "
        "where model_name = 'fct_readings' order by 1",
    )
    assert ledger == [(day,) for day in [*DAYS, late]]
