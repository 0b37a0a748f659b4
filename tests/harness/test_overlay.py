"""The harness's patched copies of the dbt project (harness/overlay.py): an armed copy
fails where it is told to, the product never does, and an overlay that no longer fits
the product is refused by name."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest

from harness import overlay
from harness.variants import VARIANTS
from refill.rules.window import window_vars
from refill.sample_data import DaySpec, write_day, write_days
from refill.warehouse import ops
from refill.warehouse.dbt_runner import DbtProject
from tests.helpers import snapshot

FIRST = date(2026, 3, 1)


def day(n: int) -> date:
    return FIRST + timedelta(days=n - 1)


@pytest.fixture(scope="module")
def armed_project() -> DbtProject:
    return DbtProject(project_dir=overlay.patched_project())


def rebuild(project: DbtProject, run_id: str = "overlay-test"):
    return project.build(window_vars(day(1), day(2), run_id=run_id))


def test_an_armed_copy_fails_at_its_fault_point_and_the_product_does_not(
    dbt_project, armed_project, workspace, monkeypatch
):
    # GIVEN a published window and a re-export that would change it
    write_days(workspace.landing, FIRST, 2)
    assert rebuild(dbt_project).success
    write_day(workspace.landing, day(2), DaySpec(amount_factor=2, export_version=2))
    before = snapshot(workspace.warehouse, full=True)

    # WHEN the harness's fault variable names the point after the window's delete
    monkeypatch.setenv(overlay.FAULT_ENV, overlay.fault_spec("after_delete"))
    armed = rebuild(armed_project)

    # THEN the armed copy fails there, naming the point, and changes nothing
    assert not armed.success
    assert "refill fault injected at after_delete" in armed.message
    assert snapshot(workspace.warehouse, full=True) == before

    # AND the product, under the same environment, reads no such variable and publishes
    assert rebuild(dbt_project).success
    assert snapshot(workspace.warehouse, full=True) != before


def test_a_fault_is_scoped_to_its_model_window_and_first_attempts(
    armed_project, workspace, monkeypatch
):
    # GIVEN two landed days
    write_days(workspace.landing, FIRST, 2)

    # WHEN a fault names another window, it does nothing
    monkeypatch.setenv(overlay.FAULT_ENV, overlay.fault_spec("after_delete", day(3)))
    assert rebuild(armed_project, "run-a").success

    # WHEN it names a later model of the chunk (at its audit, or before its ledger rows:
    # whichever of the two runs inside the model in this version of the product), the
    # build fails in that model
    window = (day(1), day(2))
    specs = [
        overlay.fault_spec(point, window, model="fct_daily_revenue_v2")
        for point in ("in_audit", "before_ledger")
    ]
    monkeypatch.setenv(overlay.FAULT_ENV, ",".join(specs))
    in_v2 = rebuild(armed_project, "run-b")
    assert not in_v2.success
    assert re.search(r"fault injected at \w+ in fct_daily_revenue_v2", in_v2.message)

    # WHEN it is limited to the first attempt, it fails that attempt only: the retry
    # sees the failed attempt the flows recorded for the run and window
    monkeypatch.setenv(overlay.FAULT_ENV, overlay.fault_spec("before_ledger", attempts=1))
    assert not rebuild(armed_project, "run-c").success
    with ops.connect(workspace.warehouse) as connection:
        now = ops.utc_now()
        attempt = ops.Attempt("run-c", "test", day(1), day(2), 1, "failed", "x", now, now)
        ops.record_attempt(connection, [day(1), day(2)], attempt)
    assert rebuild(armed_project, "run-c").success
    assert not rebuild(armed_project, "run-d").success  # another run starts at attempt 1


def test_a_copy_holds_what_dbt_needs_and_nothing_of_the_checkout(tmp_path):
    copy = overlay.build_copy(overlay.settings.PACKAGE_PROJECT_DIR, tmp_path / "copy")
    assert (copy / "dbt_project.yml").is_file() and (copy / "profiles.yml").is_file()
    assert (copy / "models").is_dir() and (copy / "macros").is_dir() and (copy / "seeds").is_dir()
    for left_out in (
        "target",
        "logs",
        ".venv",
        "data",
        "warehouse",
        "tests",
        "flows",
        "refill",
        ".git",
    ):
        assert not (copy / left_out).exists(), left_out


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_variant_overlay_fits_the_product(variant):
    # GIVEN a variant's overlays (the alternative that fits this product, for each layer)
    replaced = overlay.replaced_files(variant)

    # WHEN its copy is built THEN every file it names is replaced, the seam armed
    copy = overlay.patched_project(variant)
    assert "macros/faults/refill_fault_point.sql" in replaced
    for relative, replacement in replaced.items():
        assert (copy / relative).read_text() == replacement.read_text()


def test_an_overlay_whose_product_file_moved_is_refused_by_name(tmp_path):
    # GIVEN a project whose fault seam has moved to another file
    source = tmp_path / "project"
    overlay.copy_project(overlay.settings.PACKAGE_PROJECT_DIR, source)
    seam = source / "macros" / "faults" / "refill_fault_point.sql"
    seam.rename(seam.with_name("moved.sql"))

    # WHEN a patched copy is built THEN the overlay is refused, naming the file
    with pytest.raises(overlay.OverlayError, match="macros/faults/refill_fault_point.sql"):
        overlay.build_copy(source, tmp_path / "copy")
