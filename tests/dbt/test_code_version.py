"""The code version a partition records: which edits make published partitions stale."""

from __future__ import annotations

import shutil
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from refill.settings import PACKAGE_PROJECT_DIR as PROJECT_DIR
from refill.warehouse.dbt_runner import DbtProject
from tests.helpers import FX_SEED, grow_seed_past, set_fx_rate

PROJECT_FILES = ["dbt_project.yml", "profiles.yml", "models", "macros", "seeds"]
MARTS = ["fct_payments", "payments_quarantine", "fct_daily_revenue_v1", "fct_daily_revenue_v2"]


@pytest.fixture
def project_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the dbt project to edit, with its own dbt target folder."""
    copy = tmp_path / "project"
    copy.mkdir()
    for name in PROJECT_FILES:
        source = PROJECT_DIR / name
        if source.is_dir():
            shutil.copytree(source, copy / name)
        else:
            shutil.copy2(source, copy / name)
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "target"))
    monkeypatch.setenv("REFILL_WAREHOUSE", str(tmp_path / "warehouse" / "refill.duckdb"))
    return copy


def versions_after(project: Path, path: str | None = None, edit=None) -> dict[str, str]:
    if path:
        file = project / path
        file.write_text(edit(file.read_text()))
    return DbtProject(project_dir=project).code_versions()


def test_editing_a_row_rule_macro_marks_every_mart_below_it_stale(project_copy):
    # GIVEN the code versions of the project as it is
    before = versions_after(project_copy)

    # WHEN the classification of landed lines (a macro under macros/rules/) changes
    after = versions_after(
        project_copy,
        "macros/rules/refill_classify_landed_lines.sql",
        lambda sql: sql.replace("'not valid JSON'", "'not JSON'"),
    )

    # THEN every mart built from the classified lines has a new version
    for mart in MARTS:
        assert after[mart] != before[mart], mart


def test_editing_plumbing_macros_or_docs_keeps_the_versions(project_copy):
    # GIVEN the code versions of the project as it is
    before = versions_after(project_copy)

    # WHEN a ledger macro and a model's docs change (neither decides a row)
    versions_after(
        project_copy,
        "macros/ops/refill_record_partitions.sql",
        lambda sql: sql + "\n{# an edit that changes no row #}\n",
    )
    after = versions_after(
        project_copy,
        "models/staging/payments/_payments__docs.md",
        lambda text: text + "\nAn added sentence.\n",
    )

    # THEN no partition becomes stale
    assert after == before


def test_editing_the_line_split_rule_marks_every_mart_stale(project_copy):
    # GIVEN the code versions of the project as it is
    before = versions_after(project_copy)

    # WHEN what a landed line is changes (a row rule reached only through the dispatched reader)
    after = versions_after(
        project_copy,
        "macros/rules/refill_split_landed_lines.sql",
        lambda sql: sql.replace("rtrim(line_text, chr(13))", "rtrim(line_text, chr(13) || ' ')"),
    )

    # THEN every mart built from the landed lines has a new version
    for mart in MARTS:
        assert after[mart] != before[mart], mart


def test_a_changed_rate_changes_the_load_key_and_the_days_that_read_it_not_the_versions(
    project_copy,
):
    # GIVEN the fx seed grown past dbt's 1 MiB threshold (dbt then keys it by its path), and
    # the code versions, seed load key and days' reference fingerprints a command computes
    seed = project_copy / FX_SEED
    grow_seed_past(seed)
    project = DbtProject(project_dir=project_copy)
    versions, load_key = project.code_versions(), project.seed_load_key()
    before = project.catalog.reference_fingerprints(date(2025, 2, 1), date(2025, 4, 30))

    # WHEN one rate of one day changes
    set_fx_rate(seed, date(2025, 3, 3), "EUR", Decimal("1.5"))

    # THEN the next command loads the seed again (a new load key), and its rows are an input
    # of the days that read them, not code: the versions stay; the fingerprints of March's
    # days change (fct_payments reads March 3's rate, fct_daily_revenue_v1 March's average)
    again = DbtProject(project_dir=project_copy)
    assert again.seed_load_key() != load_key
    assert again.code_versions() == versions
    after = again.catalog.reference_fingerprints(date(2025, 2, 1), date(2025, 4, 30))
    changed = sorted(day for day in before if before[day] != after[day])
    assert changed == [date(2025, 3, 1) + timedelta(days=n) for n in range(31)]
    # AND so does the process that had parsed the project before the change (a worker's)
    assert project.seed_load_key() == again.seed_load_key()
    assert project.catalog.reference_fingerprints(date(2025, 2, 1), date(2025, 4, 30)) == after


def test_a_seeds_column_types_stay_code(project_copy):
    # GIVEN the code versions of the project as it is
    before = versions_after(project_copy)

    # WHEN the fx seed's column types change (how its rows are typed, not which rows)
    after = versions_after(
        project_copy,
        "dbt_project.yml",
        lambda text: text.replace("usd_per_unit: decimal(18, 6)", "usd_per_unit: decimal(18, 8)"),
    )

    # THEN every mart that reads it has a new version
    for mart in MARTS:
        assert after[mart] != before[mart], mart


def test_a_seed_its_datasets_do_not_declare_stays_code(project_copy):
    # GIVEN a project whose payments do not declare what they read of the markets seed
    models = project_copy / "models/marts/payments/_payments__models.yml"
    models.write_text(models.read_text().replace("- {seed: markets, distinct: [market]}", ""))
    before = versions_after(project_copy)

    # WHEN a market is added to the seed
    after = versions_after(
        project_copy, "seeds/markets.csv", lambda text: text + "CH,Switzerland,CHF\n"
    )

    # THEN its content is code again: every mart that reads it has a new version, and the
    # days' reference fingerprints do not name it
    for mart in MARTS:
        assert after[mart] != before[mart], mart
    day = date(2025, 3, 3)
    (fingerprint,) = DbtProject(project_dir=project_copy).catalog.reference_fingerprints(day, day)[
        day
    ]
    assert fingerprint.startswith("fx_rates_daily:") and "markets" not in fingerprint


def _reformatted(sql: str) -> str:
    """`sql` as another author might lay it out: a comment of each kind added, each
    indent of the query doubled, blank lines removed, a line's end moved; no token changed.
    The config block's hooks are strings, whose text is kept as written."""
    config, query = sql.split("\n}}\n", 1)
    lines = [line.replace("    ", "        ") for line in query.splitlines() if line.strip()]
    text = config + "\n}}\n" + "\n".join(lines)
    text = text.replace("with lines as (", "/* the landed lines */ with\n  lines   as (", 1)
    text = text.replace("),", ") ,   -- next: the rates\n", 1)
    return "{# who wrote it, and why #}\n" + text + "\n-- the end\n"


def test_a_comment_or_layout_edit_keeps_every_version(project_copy):
    # GIVEN the code versions of the project as it is
    before = versions_after(project_copy)

    # WHEN the facts model and a row rule change only in comments and layout
    versions_after(project_copy, "models/marts/payments/fct_payments.sql", _reformatted)
    after = versions_after(
        project_copy,
        "macros/rules/refill_classify_landed_lines.sql",
        lambda sql: sql.replace("-- partition", "-- the partition  /* of a line */").replace(
            "\n", "\n\n"
        ),
    )

    # THEN no partition becomes stale (issue 34 finding 13: every day was, on every mart)
    assert after == before


def test_a_change_of_meaning_makes_stale_only_the_models_it_reaches(project_copy):
    # GIVEN the code versions of the project as it is
    before = versions_after(project_copy)

    # WHEN a string literal of the v2 revenue mart changes (the same edit made in a comment
    # too, which alone would change nothing)
    after = versions_after(
        project_copy,
        "models/marts/revenue/fct_daily_revenue_v2.sql",
        lambda sql: sql.replace("status in ('captured', 'refunded')", "status in ('captured')"),
    )

    # THEN v2 is stale and every other mart current
    assert after["fct_daily_revenue_v2"] != before["fct_daily_revenue_v2"]
    assert {m: v for m, v in after.items() if m != "fct_daily_revenue_v2"} == {
        m: v for m, v in before.items() if m != "fct_daily_revenue_v2"
    }


def test_the_declared_lines_are_code_their_layout_is_not(project_copy):
    # GIVEN the code versions of the project as it is
    before = versions_after(project_copy)

    # WHEN the payments declaration is only written another way (a field's entries in
    # another order, a block mapping instead of a flow one)
    relaid = versions_after(
        project_copy,
        "dbt_project.yml",
        lambda text: text.replace(
            '- {name: amount, type: "decimal(18, 2)"}',
            '- type: "decimal(18, 2)"\n          name: amount',
        ),
    )

    # THEN every mart keeps its version
    assert relaid == before

    # WHEN it accepts one more status (a change of what a line may be)
    widened = versions_after(
        project_copy,
        "dbt_project.yml",
        lambda text: text.replace(
            "accepted_values: [captured, refunded, failed]",
            "accepted_values: [captured, refunded, failed, disputed]",
        ),
    )

    # THEN every mart built from the dataset's lines is stale
    for mart in MARTS:
        assert widened[mart] != before[mart], mart
