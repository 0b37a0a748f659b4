"""What the properties share: a warehouse with the seeds loaded, built once per session and
copied for each example that needs a fresh one (a copy is milliseconds; loading the seeds
is seconds), and one parsed dbt project (tests/conftest.py's `dbt_project`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def seeded_warehouse(tmp_path_factory, dbt_project) -> Path:
    """A warehouse file holding the loaded seeds and the ops relations, nothing else."""
    root = tmp_path_factory.mktemp("seeded")
    warehouse = root / "warehouse" / "refill.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_LANDING", str(root / "landing"))
        patch.setenv("REFILL_WAREHOUSE", str(warehouse))
        result = dbt_project.invoke(["seed"])
    assert result.success, result.exception
    return warehouse


def copy_warehouse(template: Path, target: Path) -> Path:
    """A fresh copy of `template` at `target` (its folder made), the file and its WAL."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", ".wal"):
        source = template.with_name(template.name + suffix)
        destination = target.with_name(target.name + suffix)
        destination.unlink(missing_ok=True)
        if source.exists():
            shutil.copy2(source, destination)
    return target
