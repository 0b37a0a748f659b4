"""refill from a non-editable install (`pip install .`): the package in site-packages, the
dbt project where REFILL_PROJECT_DIR says."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from datetime import date
from pathlib import Path

import duckdb
import pytest

from refill.sample_data import DaySpec, write_day
from refill.settings import PACKAGE_PROJECT_DIR


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A fresh clone of the project: the folder REFILL_PROJECT_DIR names, and the source the
    install builds from (a build leaves build/ behind; not in the checkout under test)."""
    clone = tmp_path_factory.mktemp("project") / "refill"
    subprocess.run(["git", "clone", "--quiet", str(PACKAGE_PROJECT_DIR), str(clone)], check=True)
    return clone


@pytest.fixture(scope="module")
def installed(tmp_path_factory, project) -> Path:
    """A virtual environment with refill installed from the clone, not editable.

    Its dependencies are this environment's (a path entry: only the build backend is
    downloaded, as `pip install .` does); the project's own package comes only from the
    install."""
    root = tmp_path_factory.mktemp("installed")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "refill_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps"] + [str(project)],
        check=True,
        cwd=root,
    )
    return venv


def _refill(venv: Path, *arguments: str, cwd: Path, **environment: str):
    env = {k: v for k, v in os.environ.items() if k not in ("REFILL_PROJECT_DIR", "PYTHONPATH")}
    env.update(environment)
    return subprocess.run(
        [str(venv / "bin" / "refill"), *arguments],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_an_installed_refill_builds_a_day_of_the_project_refill_project_dir_names(
    installed, project, tmp_path
):
    # GIVEN refill installed into site-packages, and a landed day
    where = subprocess.run(
        [installed / "bin" / "python", "-c", "import refill; print(refill.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(installed) in where, where
    day = date(2026, 1, 1)
    write_day(tmp_path / "landing", day, DaySpec(payments=50))
    warehouse = tmp_path / "warehouse" / "refill.duckdb"

    # WHEN it builds the day from another folder, the project named by REFILL_PROJECT_DIR
    done = _refill(
        installed,
        "daily",
        "--date",
        str(day),
        "--retries",
        "1",
        cwd=tmp_path,
        REFILL_PROJECT_DIR=str(project),
        REFILL_LANDING=str(tmp_path / "landing"),
        REFILL_WAREHOUSE=str(warehouse),
    )

    # THEN the day is published
    assert done.returncode == 0, done.stdout + done.stderr
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        [(rows,)] = connection.execute("select count(*) from main.fct_payments").fetchall()
    assert rows > 0

    # AND the installed board draws it, its style and script read from the package's files
    page = tmp_path / "board.html"
    span = ["--start", str(day), "--end", str(day), "--out", str(page)]
    drawn = _refill(
        installed,
        "board",
        *span,
        cwd=tmp_path,
        REFILL_PROJECT_DIR=str(project),
        REFILL_LANDING=str(tmp_path / "landing"),
        REFILL_WAREHOUSE=str(warehouse),
    )
    assert drawn.returncode == 0, drawn.stdout + drawn.stderr
    assert "--ok: #1f9d55" in page.read_text() and "data-poll" in page.read_text()


def test_an_installed_refill_without_refill_project_dir_says_what_to_set(installed, tmp_path):
    # WHEN the installed command runs with no project folder named
    done = _refill(installed, "status", cwd=tmp_path)
    # THEN it fails in one line that names the setting, a configuration error (exit 2)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "set REFILL_PROJECT_DIR" in done.stderr
