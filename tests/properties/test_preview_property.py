"""Properties of the restatement preview.

- The report is the truth: for any set of stale days, contiguous or not, previewed by
  `gaps --fix --preview` (exactly those days) or `backfill --preview` without --restate (the
  stale days of the window), in any chunking and order, the report's old and new numbers
  per day, model and market are those of the published warehouse and of a warehouse built
  from the re-exported landing alone (the oracle: the same exports built apart), and it
  reports no other day.
- A publish of a preview refuses or publishes exactly what was previewed: under any
  interleaving of re-exports and daily runs after the preview (before the publish starts,
  or while it waits for the warehouse), `--from-preview` refuses, in one line and changing
  nothing, when any of them touched a previewed day, and otherwise publishes rows equal to
  the ones the preview kept.

Each example copies a warehouse and a landing prepared once per module, and runs one
preview or one publish (a few seconds): the "ci" profile runs PREVIEW_EXAMPLES of each.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import date, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from refill.errors import RefillError
from refill.rules.readiness import day_folder
from refill.sample_data import DATASET, DaySpec, write_day
from refill.warehouse.dbt_runner import shared_project
from tests.helpers import consumer_results, query
from tests.runs import run_backfill, run_daily

pytestmark = pytest.mark.usefixtures("prefect_harness")

D1 = date(2026, 6, 1)
DAYS = [D1 + timedelta(days=n) for n in range(6)]
# Examples per property under the "ci" profile (each runs a flow); `make fuzz` runs the
# long profile's count.
PREVIEW_EXAMPLES = 8
bounded = settings(
    max_examples=PREVIEW_EXAMPLES
    if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci"
    else settings.default.max_examples
)
EXPORTS = {  # the three exports a day can have: as published, re-exported, re-exported again
    "original": (DaySpec(payments=30, parts=1), 3),
    "reexported": (DaySpec(payments=38, parts=2, amount_factor=1.4), 9),
    "again": (DaySpec(payments=25, parts=1, keep_fraction=0.8), 17),
}


def use(monkeypatch, landing, warehouse) -> None:
    monkeypatch.setenv("REFILL_LANDING", str(landing))
    monkeypatch.setenv("REFILL_WAREHOUSE", str(warehouse))


def land(landing, exports: dict[date, str]) -> None:
    """Give `landing` each day's export (a copy of the module's export of it)."""
    for day, export in exports.items():
        target = day_folder(landing, DATASET, day)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(day_folder(WORLD["exports"] / export, DATASET, day), target)


WORLD: dict = {}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The module's exports of every day, the warehouse that published the original ones,
    and one built from the re-exported ones alone (the truth of a restatement)."""
    root = tmp_path_factory.mktemp("preview-property")
    WORLD["exports"] = root / "exports"
    for name, (spec, seed) in EXPORTS.items():
        for day in DAYS:
            write_day(root / "exports" / name, day, spec, seed=seed)
    with pytest.MonkeyPatch.context() as patch:
        for name in ("original", "reexported"):
            landing, warehouse = root / name / "landing", root / name / "refill.duckdb"
            land(landing, dict.fromkeys(DAYS, name))
            use(patch, landing, warehouse)
            run_backfill(start=DAYS[0], end=DAYS[-1], chunk_days=len(DAYS))
            WORLD[name] = warehouse
    WORLD["root"] = root
    return WORLD


def truth(warehouse, days) -> tuple[dict, dict]:
    """Per (day, model): rows and amount; per (day, model, market): amount; read from a
    warehouse's published tables (the facts' totals column, a versioned mart's headline
    measure, as the catalog declares them)."""
    project = shared_project()
    catalog = project.catalog
    amounts = {d.facts_model: d.totals_column for d in catalog.datasets}
    keys = {}
    for versioned in catalog.versioned:
        for name in project.partitioned_models():
            if name.startswith(versioned.name + "_v"):
                amounts[name] = versioned.measures[0]
                keys[name] = versioned.key_column
    per_day, per_market = {}, {}
    for name, node in project.partitioned_models().items():
        column = node.config.get("partition_column")
        measure = amounts.get(name)
        total = f"sum({measure})" if measure else "0"
        for day, rows, amount in query(
            warehouse,
            f"select {column}, count(*), {total} from main.{name} "
            f"where {column} between ? and ? group by 1",
            [min(days), max(days)],
        ):
            if day in days:
                per_day[(day, name)] = (rows, Decimal(amount or 0))
        if name in keys:
            for day, key, amount in query(
                warehouse,
                f"select {column}, {keys[name]}, sum({measure}) from main.{name} "
                f"where {column} between ? and ? group by 1, 2",
                [min(days), max(days)],
            ):
                if day in days:
                    per_market[(day, name, str(key))] = Decimal(amount)
    return per_day, per_market


def headline_measures() -> set[str]:
    """The measure truth() sums per model: the facts' totals, a versioned mart's first
    ("" is a model that declares none)."""
    catalog = shared_project().catalog
    return (
        {d.totals_column or "" for d in catalog.datasets}
        | {v.measures[0] for v in catalog.versioned}
        | {""}
    )


@bounded
@given(
    stale=st.sets(st.sampled_from(DAYS), min_size=1, max_size=4),
    chunk_days=st.integers(1, 3),
    order=st.sampled_from(["newest-first", "oldest-first"]),
    path=st.sampled_from(["gaps --fix --preview", "backfill --preview"]),
)
def test_the_report_is_the_truth_per_day_model_and_market(
    world, tmp_path_factory, stale, chunk_days, order, path
):
    # GIVEN the original days published, and the `stale` days re-exported since
    folder = tmp_path_factory.mktemp("example")
    warehouse = folder / "refill.duckdb"
    shutil.copy(world["original"], warehouse)
    land(folder / "landing", {day: "reexported" if day in stale else "original" for day in DAYS})
    reports = folder / "reports"
    with pytest.MonkeyPatch.context() as patch:
        use(patch, folder / "landing", warehouse)
        # WHEN they are previewed
        if path == "gaps --fix --preview":
            days = sorted(stale)
            outcome = run_backfill(
                start=days[0],
                end=days[-1],
                order="newest-first",
                chunk_days=chunk_days,
                only_days=days,
                preview=True,
                report_dir=str(reports),
            ).preview
        else:
            outcome = run_backfill(
                start=DAYS[0],
                end=DAYS[-1],
                order=order,
                chunk_days=chunk_days,
                preview=True,
                report_dir=str(reports),
            ).preview
    saved = json.loads((reports / outcome.preview_id / "report.json").read_text())

    # THEN per day and model, and per market, old is what is published, new what the
    # re-export alone builds; and no other day is reported
    old_days, old_markets = truth(world["original"], stale)
    new_days, new_markets = truth(world["reexported"], stale)
    headline = headline_measures()  # what truth() sums (the report has every measure)
    reported = {
        (date.fromisoformat(r["day"]), r["model"]): (
            (r["old_rows"], Decimal(r["old_amount"])),
            (r["new_rows"], Decimal(r["new_amount"])),
        )
        for r in saved["days"]
        if r["measure"] in headline
    }
    none = (0, Decimal(0))  # a model with no row that day (its ledger says 0)
    expected = {
        (day, name): (old_days.get((day, name), none), new_days.get((day, name), none))
        for day in stale
        for name in shared_project().partitioned_models()
    }
    assert reported == expected
    markets = {
        (date.fromisoformat(r["day"]), r["model"], r["key"]): (
            Decimal(r["old_amount"]),
            Decimal(r["new_amount"]),
        )
        for r in saved["by_key"]
        if r["measure"] in headline
    }
    assert markets == {
        key: (old_markets.get(key, Decimal(0)), new_markets.get(key, Decimal(0)))
        for key in set(old_markets) | set(new_markets)
    }


@pytest.fixture(scope="module")
def previewed(world):
    """The original days published, days 2 and 5 re-exported, and a preview of the six
    days (--restate, chunks of two, newest first) kept: the template each example copies."""
    folder = world["root"] / "previewed"
    warehouse = folder / "refill.duckdb"
    warehouse.parent.mkdir(parents=True)
    shutil.copy(world["original"], warehouse)
    exports = {day: "reexported" if day in (DAYS[1], DAYS[4]) else "original" for day in DAYS}
    land(folder / "landing", exports)
    with pytest.MonkeyPatch.context() as patch:
        use(patch, folder / "landing", warehouse)
        outcome = run_backfill(
            start=DAYS[0], end=DAYS[-1], chunk_days=2, restate=True, preview=True
        ).preview
    return {"warehouse": warehouse, "exports": exports, "preview_id": outcome.preview_id}


def kept_rows(warehouse, preview_id) -> dict[str, list[tuple]]:
    """The rows the preview kept, per model, lineage aside."""
    return {
        name: query(
            warehouse,
            f'select * exclude (_run_id) from preview."{preview_id}__main__{name}" order by all',
        )
        for name in shared_project().partitioned_models()
    }


def published_rows(warehouse) -> dict[str, list[tuple]]:
    return {
        name: query(warehouse, f"select * exclude (_run_id) from main.{name} order by all")
        for name in shared_project().partitioned_models()
    }


EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["reexport", "daily"]),
        st.sampled_from(DAYS),
        st.sampled_from(["before the publish", "while it waits for the lock"]),
    ),
    max_size=3,
)


@bounded
@given(events=EVENTS)
def test_from_preview_refuses_or_publishes_exactly_what_was_previewed(
    previewed, tmp_path_factory, events
):
    folder = tmp_path_factory.mktemp("example")
    warehouse = folder / "refill.duckdb"
    shutil.copy(previewed["warehouse"], warehouse)
    land(folder / "landing", previewed["exports"])
    preview_id = previewed["preview_id"]
    kept = kept_rows(warehouse, preview_id)
    # a re-export can land while the publish waits for the warehouse; a daily run is a
    # run of its own, which takes the warehouse before the publish does
    late = [(k, day) for k, day, when in events if k == "reexport" and when.startswith("while")]
    before = [(k, day) for k, day, when in events if (k, day) not in late]
    waiting = [day for _, day in late]

    with pytest.MonkeyPatch.context() as patch:
        use(patch, folder / "landing", warehouse)
        # GIVEN re-exports and daily runs after the preview
        for kind, day in before:
            if kind == "reexport":
                land(folder / "landing", {day: "again"})
            else:
                run_daily(day, confirm=True)
        if waiting:
            from refill.warehouse import locking
            from refill.warehouse.duckdb_engine import DuckDBWarehouse

            take_the_lock = DuckDBWarehouse.lock

            def reexport_while_it_waits(self, **kwargs):
                if waiting and kwargs["priority"] != locking.READ:
                    land(folder / "landing", dict.fromkeys(waiting, "again"))
                    waiting.clear()
                return take_the_lock(self, **kwargs)

            patch.setattr(DuckDBWarehouse, "lock", reexport_while_it_waits)
        start = consumer_results(warehouse)

        # WHEN the preview is published
        try:
            run_backfill(
                start=DAYS[0], end=DAYS[-1], chunk_days=2, restate=True, confirm=preview_id
            )
        except RefillError as refused:
            # THEN a refusal changes nothing, says why in one line, and comes only when a
            # day of the preview was re-exported or published since
            assert events, str(refused)
            assert "\n" not in str(refused)
            assert consumer_results(warehouse) == start
            return
    # THEN what is published is exactly what the preview kept, and nothing had changed
    assert not events
    assert published_rows(warehouse) == kept
