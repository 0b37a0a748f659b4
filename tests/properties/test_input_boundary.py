"""Property (input boundary): whatever a day's folder holds (arbitrary text and bytes in
every manifest field, arbitrary file and folder names, part files that are symlinks, FIFOs,
hard links or folders), the day is ready and consistent, or not ready with one line naming
the day and what is wrong; never a traceback, never a byte from outside the landing.

Two levels: the readiness rule alone, fast and with many examples (no dbt), and a smaller
end-to-end property where a plain `dbt build` of the day publishes it as the oracle says or
refuses it and changes nothing.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import event, given, settings

from refill.rules import readiness
from refill.rules.window import window_vars
from refill.sample_data import DATASET, payment_line, write_landed_day
from tests.helpers import expected_day, kept_lines, published_tables, query
from tests.properties.conftest import copy_warehouse
from tests.properties.landings import (
    OUTSIDE_MARKER,
    ArbitraryDay,
    arbitrary_days,
    is_regular_single_file,
    land_arbitrary_day,
    lines_in,
)

# The landing contract (docs/reference/landing.md), written here independently of refill's rule.
CONTRACT_PART_NAME = re.compile(r"part-[A-Za-z0-9_-]{1,64}\.jsonl", re.ASCII)
CONTRACT_EXPORTED_AT = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|\+00:00)", re.ASCII
)
# What a reason names: the manifest (and which field, or how it disagrees), a part file, or
# the day's folder.
NAMED = re.compile(
    r"^(_SUCCESS (is |has no |names dt |lists |(dt|files|records|exported_at) )|"
    r"no _SUCCESS manifest$|no landing folder$|part file |"
    r"(payments|dt=\d{4}-\d{2}-\d{2}) is a symbolic link)"
)


def holds_to_the_contract(folder: Path, day: date) -> bool:
    """Whether the folder is a ready day by the landing contract, checked without refill."""
    parts = sorted(folder.glob("part-*.jsonl"))
    if not all(CONTRACT_PART_NAME.fullmatch(p.name) and is_regular_single_file(p) for p in parts):
        return False
    manifest_path = folder / "_SUCCESS"
    if not manifest_path.exists() or not is_regular_single_file(manifest_path):
        return False
    try:
        manifest = json.loads(manifest_path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    if not isinstance(manifest, dict):
        return False
    counts = [manifest.get(name) for name in ("files", "records")]
    if any(type(count) is not int or not 0 <= count < 2**63 for count in counts):
        return False
    exported_at = manifest.get("exported_at")
    if not isinstance(exported_at, str) or not CONTRACT_EXPORTED_AT.fullmatch(exported_at):
        return False
    try:
        datetime.fromisoformat(exported_at.replace("Z", "+00:00"))
    except ValueError:
        return False
    records = sum(lines_in(p.read_bytes()) for p in parts)
    return manifest.get("dt") == day.isoformat() and counts == [len(parts), records]


@settings(max_examples=settings().max_examples * 8)  # the pure rule: cheap, so many more
@given(arbitrary=arbitrary_days())
def test_any_day_folder_is_ready_by_the_contract_or_refused_on_one_line(arbitrary: ArbitraryDay):
    with tempfile.TemporaryDirectory() as scratch:
        # GIVEN a day's folder holding anything
        landing = Path(scratch) / "landing"
        folder = land_arbitrary_day(landing, arbitrary)

        # WHEN readiness judges it (it must not raise)
        verdict = readiness.day_readiness(landing, DATASET, arbitrary.day)

        # THEN it is ready exactly when the folder holds to the landing contract
        event("ready" if verdict.is_ready else f"not ready: {verdict.reason.split(' ')[0:2]}")
        assert verdict.is_ready == holds_to_the_contract(folder, arbitrary.day), verdict.reason
        if verdict.is_ready:
            parts = sorted(folder.glob("part-*.jsonl"))
            assert verdict.part_files == [p.relative_to(landing).as_posix() for p in parts]
            assert not any(OUTSIDE_MARKER.encode() in p.read_bytes() for p in parts)
            return
        # AND a day not ready says why on one printable ASCII line naming the day and what
        assert verdict.reason.isascii() and verdict.reason.isprintable()
        assert NAMED.match(verdict.reason), verdict.reason
        assert OUTSIDE_MARKER not in verdict.reason


# -- end to end: a plain dbt build of the day -------------------------------------------------

PUBLISHED_DAY = date(2025, 5, 4)
NEW_DAY = PUBLISHED_DAY + timedelta(days=1)


@pytest.fixture(scope="module")
def one_published_day(tmp_path_factory, seeded_warehouse, dbt_project):
    """A landing and a warehouse with PUBLISHED_DAY built, for each example to copy."""
    root = tmp_path_factory.mktemp("boundary")
    landing, warehouse = root / "landing", root / "warehouse" / "refill.duckdb"
    write_landed_day(landing, PUBLISHED_DAY, [[payment_line(PUBLISHED_DAY, n) for n in range(3)]])
    copy_warehouse(seeded_warehouse, warehouse)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_LANDING", str(landing))
        patch.setenv("REFILL_WAREHOUSE", str(warehouse))
        outcome = dbt_project.build(window_vars(PUBLISHED_DAY, PUBLISHED_DAY), include_seeds=False)
    assert outcome.success, outcome.message
    return landing, warehouse


def every_text(warehouse: Path) -> str:
    """Every row of every table in main and staging, as text: where a stray byte would be."""
    tables = query(
        warehouse,
        "select table_schema || '.' || table_name from information_schema.tables "
        "where table_schema in ('main', 'staging') order by 1",
    )
    return repr([query(warehouse, f"select * from {name}") for (name,) in tables])


@settings(max_examples=max(settings().max_examples // 3, 4))
@given(arbitrary=arbitrary_days(day=NEW_DAY))
def test_a_dbt_build_of_any_day_publishes_it_as_the_oracle_says_or_changes_nothing(
    one_published_day, dbt_project, arbitrary: ArbitraryDay
):
    template_landing, template_warehouse = one_published_day
    with tempfile.TemporaryDirectory() as scratch, pytest.MonkeyPatch.context() as patch:
        # GIVEN a warehouse with one published day, and a new day's folder holding anything
        landing = Path(scratch) / "landing"
        shutil.copytree(template_landing, landing)
        warehouse = copy_warehouse(template_warehouse, Path(scratch) / "w" / "refill.duckdb")
        patch.setenv("REFILL_LANDING", str(landing))
        patch.setenv("REFILL_WAREHOUSE", str(warehouse))
        land_arbitrary_day(landing, arbitrary)
        ready = readiness.day_readiness(landing, DATASET, NEW_DAY).is_ready
        before = published_tables(warehouse)

        # WHEN a plain dbt build asks for it
        outcome = dbt_project.build(window_vars(NEW_DAY, NEW_DAY), include_seeds=False)

        # THEN a ready day is published as the oracle says
        if ready:
            assert outcome.success, outcome.message
            truth = expected_day(landing, NEW_DAY)
            assert query(
                warehouse,
                "select count(*), coalesce(sum(amount), 0) from main.fct_payments "
                "where event_date = ?",
                [NEW_DAY],
            ) == [(truth.published, truth.amount or Decimal(0))]
            # AND every quarantined line is kept where it landed, with its text as landed
            assert (
                kept_lines(warehouse, NEW_DAY, truth.quarantined_lines) == truth.quarantined_lines
            )
        # AND a day not ready is refused by name, one line, and nothing changes
        else:
            assert not outcome.success
            assert "refill readiness:" in outcome.message and f"{NEW_DAY} (" in outcome.message
            assert "\n" not in outcome.message
            assert published_tables(warehouse) == before
        # AND no byte from outside the landing is anywhere in the warehouse
        assert OUTSIDE_MARKER not in every_text(warehouse)
