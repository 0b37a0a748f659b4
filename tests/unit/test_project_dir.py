"""refill finds its project as dbt does: REFILL_PROJECT_DIR (dbt's DBT_PROJECT_DIR), else the
working directory or its parents, else the installed checkout; and says which it uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from refill import settings


def _project(folder: Path, name: str = "refill") -> Path:
    folder.mkdir(parents=True)
    (folder / "dbt_project.yml").write_text(f"name: {name}\nprofile: refill\n")
    return folder


def test_a_command_in_another_checkout_or_its_subfolder_uses_that_checkout(tmp_path, monkeypatch):
    other = _project(tmp_path / "other-checkout")
    (other / "models" / "marts").mkdir(parents=True)
    monkeypatch.delenv("REFILL_PROJECT_DIR", raising=False)
    monkeypatch.chdir(other / "models" / "marts")

    assert settings.project_dir() == other.resolve()
    assert f"project {other.resolve()} (from the working directory)" in settings.where_line()


def test_the_environment_names_the_project_first(tmp_path, monkeypatch):
    here = _project(tmp_path / "here")
    named = _project(tmp_path / "named")
    monkeypatch.chdir(here)
    monkeypatch.setenv("REFILL_PROJECT_DIR", str(named))

    assert settings.project_dir() == named.resolve()


@pytest.mark.parametrize("name", ["jaffle_shop", None])
def test_another_dbt_project_or_none_falls_back_to_the_installed_checkout(
    tmp_path, monkeypatch, name
):
    folder = _project(tmp_path / "project", name) if name else tmp_path
    monkeypatch.delenv("REFILL_PROJECT_DIR", raising=False)
    monkeypatch.chdir(folder)

    assert settings.project_dir() == settings.PACKAGE_PROJECT_DIR
    assert "(from the package's checkout)" in settings.where_line()
