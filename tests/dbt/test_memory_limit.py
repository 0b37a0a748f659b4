"""dbt's DuckDB sessions get refill's memory budget (the dbt plugin, on every path): a big
day spills to disk past it instead of growing with the day (docs/performance.md, a big
day). The budget is a size or a share of the machine's memory, from REFILL_DUCKDB_MEMORY_LIMIT
or else the profile's plugin setting, validated in one place (refill.settings)."""

from __future__ import annotations

import json
from datetime import date, timedelta

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st

from refill import settings
from refill.errors import RefillError
from refill.rules import readiness
from refill.rules.planning import DateRange, plan_chunks
from refill.rules.window import window_vars
from refill.sample_data import DATASET, DaySpec, write_day
from refill.warehouse.dbt_plugin import Plugin, limit_memory
from tests.helpers import expected_day, query

GIB = 2**30


def memory_limit(connection) -> str:
    return connection.execute("select current_setting('memory_limit')").fetchone()[0]


def duckdb_reads(size: str) -> str:
    """How DuckDB shows a limit it was given (its own rounding and units)."""
    with duckdb.connect() as reference:
        reference.execute("set memory_limit = ?", [size])
        return memory_limit(reference)


@pytest.fixture
def machine_of_10_gib(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(settings, "machine_memory_bytes", lambda: 10 * GIB)
    monkeypatch.delenv(settings.DUCKDB_MEMORY_LIMIT_ENV, raising=False)


def test_the_default_is_a_share_of_the_machine_s_memory(machine_of_10_gib):
    # 2% of 10 GiB: 204.8 MiB, whole MiB
    assert settings.duckdb_memory_limit() == "204MiB"
    with duckdb.connect() as connection:
        limit_memory(connection)
        assert memory_limit(connection) == duckdb_reads("204MiB")


def test_the_default_follows_the_machine(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(settings.DUCKDB_MEMORY_LIMIT_ENV, raising=False)
    monkeypatch.setattr(settings, "machine_memory_bytes", lambda: 64 * GIB)
    bigger = settings.duckdb_memory_limit()
    monkeypatch.setattr(settings, "machine_memory_bytes", lambda: 1 * GIB)
    # never so small that a small chunk's joins spill
    assert settings.duckdb_memory_limit() == f"{settings.MIN_DUCKDB_MEMORY_BYTES // 2**20}MiB"
    assert bigger == f"{round(64 * GIB * 0.02) // 2**20}MiB"


def test_the_machine_s_memory_is_what_the_system_reports():
    total = settings.machine_memory_bytes()
    assert 0 < total <= duckdb_total_ram_bytes() * 1.01


def duckdb_total_ram_bytes() -> int:
    with duckdb.connect() as connection:
        # DuckDB's default limit is 80% of what it finds (the machine's or its container's)
        connection.execute("reset memory_limit")
        shown = memory_limit(connection)
    number, unit = shown.split()
    return round(float(number) * {"MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[unit] / 0.8)


def test_the_environment_wins_over_the_profile(machine_of_10_gib, monkeypatch):
    monkeypatch.setenv(settings.DUCKDB_MEMORY_LIMIT_ENV, "10%")
    assert settings.duckdb_memory_limit("300MB") == "1024MiB"


def test_the_profile_s_setting_reaches_every_dbt_session(machine_of_10_gib):
    # the plugin as dbt-duckdb makes it from profiles.yml (`config: {memory_limit: ...}`)
    plugin = Plugin(name="refill", plugin_config={"memory_limit": "300MB"})
    with duckdb.connect() as connection:
        plugin.configure_connection(connection)
        assert memory_limit(connection) == duckdb_reads("300MB")


def test_an_empty_setting_keeps_duckdb_s_default(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(settings.DUCKDB_MEMORY_LIMIT_ENV, "")
    with duckdb.connect() as connection, duckdb.connect() as untouched:
        limit_memory(connection, "300MB")
        assert memory_limit(connection) == memory_limit(untouched)


@pytest.mark.parametrize(
    "value", ["lots", "1GB; drop table x", "-1GB", "1 G B", "0%", "101%", "5%%", "50 % x"]
)
def test_a_limit_that_is_not_a_size_or_share_is_refused_by_name(monkeypatch, value):
    monkeypatch.setenv(settings.DUCKDB_MEMORY_LIMIT_ENV, value)
    with pytest.raises(RefillError, match=settings.DUCKDB_MEMORY_LIMIT_ENV):
        settings.duckdb_memory_limit()


def test_a_bad_profile_setting_stops_the_session_naming_it(machine_of_10_gib):
    plugin = Plugin(name="refill", plugin_config={"memory_limit": "plenty"})
    with duckdb.connect() as connection, pytest.raises(ValueError, match="memory_limit"):
        plugin.configure_connection(connection)


@given(share=st.decimals(min_value="0.01", max_value="100", places=2))
def test_any_share_is_that_share_of_the_machine_in_whole_mib(share):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(settings, "machine_memory_bytes", lambda: 10 * GIB)
        patch.setenv(settings.DUCKDB_MEMORY_LIMIT_ENV, f"{share.normalize():f}%")
        limit = settings.duckdb_memory_limit()
    expected = max(round(10 * GIB * float(share) / 100), settings.MIN_DUCKDB_MEMORY_BYTES)
    assert limit == f"{expected // 2**20}MiB"
    assert duckdb_reads(limit)  # DuckDB takes it


# -- a chunk at the default size, at the default budget ---------------------------------------

REFERENCE_MACHINE_BYTES = 24 * GIB  # the machine docs/performance.md measures on
STANDARD_PAYMENTS_A_DAY = 10_000  # the benchmark's standard landing (bench/landing.py)


def test_a_default_chunk_of_the_standard_landing_publishes_within_the_default_budget(
    workspace, dbt_project, monkeypatch
):
    # GIVEN the benchmark's standard landing (10,000 payments a day: replays, conflicts, 1%
    # malformed lines in every part file) over enough days for a whole default chunk, and
    # DuckDB's default budget of the reference machine (2% of 24 GiB)
    monkeypatch.delenv(settings.DUCKDB_MEMORY_LIMIT_ENV, raising=False)
    monkeypatch.setattr(settings, "machine_memory_bytes", lambda: REFERENCE_MACHINE_BYTES)
    days = DateRange(date(2026, 1, 1), date(2026, 2, 17)).days
    land_standard_days(workspace.landing, days)
    lines = {
        day: readiness.day_readiness(workspace.landing, DATASET, day).manifest_records
        for day in days
    }
    chunk = plan_chunks(
        lines, settings.CHUNK_DAYS, "oldest-first", lines=lines, chunk_lines=settings.CHUNK_LINES
    )[0]
    chunk_lines = sum(lines[day] for day in chunk.days)
    assert settings.CHUNK_LINES * 0.9 <= chunk_lines <= settings.CHUNK_LINES

    # WHEN a plain `dbt build` builds that chunk's window
    outcome = dbt_project.build(window_vars(chunk.start, chunk.end))

    # THEN it publishes, and every landed line is counted as published, duplicate or
    # quarantined (the memory budget spills; it does not fail the chunk)
    assert outcome.success, outcome.message
    assert query(
        workspace.warehouse,
        "select count(*) from staging.stg_payments__lines",
    ) == [(chunk_lines,)]
    truth = [expected_day(workspace.landing, day) for day in (chunk.start, chunk.end)]
    for day, expected in zip((chunk.start, chunk.end), truth, strict=True):
        assert query(
            workspace.warehouse,
            "select count(*), sum(amount) from main.fct_payments where event_date = ?",
            [day],
        ) == [(expected.published, expected.amount)]
        assert query(
            workspace.warehouse,
            "select count(*) from main.payments_quarantine where landed_date = ?",
            [day],
        ) == [(expected.quarantined,)]


def land_standard_days(landing, days: list[date]) -> None:
    """The benchmark's standard day (sample_data's generator at 10,000 payments), written once
    and landed again on every other day with its dates moved: the same density of replays,
    conflicts and malformed lines in seconds, where the generator takes a second a day."""
    first = days[0]
    write_day(landing, first, DaySpec(payments=STANDARD_PAYMENTS_A_DAY))
    template = readiness.day_folder(landing, DATASET, first)
    parts = sorted(template.glob(readiness.PART_GLOB))
    manifest = json.loads((template / readiness.MANIFEST_NAME).read_text())
    for day in days[1:]:
        folder = readiness.day_folder(landing, DATASET, day)
        folder.mkdir(parents=True)
        for part in parts:
            content = part.read_bytes().replace(
                first.isoformat().encode(), day.isoformat().encode()
            )
            compact = (first.strftime("%Y%m%d").encode(), day.strftime("%Y%m%d").encode())
            (folder / part.name).write_bytes(content.replace(*compact))
        exported_at = f"{day + timedelta(days=1)}T02:13:00Z"
        moved = {**manifest, "dt": day.isoformat(), "exported_at": exported_at}
        (folder / readiness.MANIFEST_NAME).write_text(json.dumps(moved))
