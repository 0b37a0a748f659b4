"""Where things live. Every path comes from the environment with a default, never hard-coded."""

from __future__ import annotations

import os
from pathlib import Path

from refill.errors import RefillError

# The source checkout this package was imported from (an editable install, or a run from
# the project folder). A non-editable install has no dbt project here: REFILL_PROJECT_DIR.
PACKAGE_PROJECT_DIR = Path(__file__).resolve().parent.parent
PROJECT_DIR_ENV = "REFILL_PROJECT_DIR"
DEFAULT_LANDING = "data/landing"
DEFAULT_WAREHOUSE = "warehouse/refill.duckdb"


def project_dir() -> Path:
    """The dbt project folder ($REFILL_PROJECT_DIR, else the checkout this package lives in).

    A Prefect worker, a non-editable install or the harness's patched copy of the project
    name it in the environment; a checkout needs nothing set."""
    raw = os.environ.get(PROJECT_DIR_ENV)
    folder = Path(raw).expanduser().resolve() if raw else PACKAGE_PROJECT_DIR
    if not (folder / "dbt_project.yml").is_file():
        source = f"{PROJECT_DIR_ENV}={raw}" if raw else f"the package's checkout {folder}"
        raise RefillError(
            f"no dbt project at {source} (no dbt_project.yml); "
            f"set {PROJECT_DIR_ENV} to the refill project folder"
        )
    return folder


def landing_root() -> Path:
    """The landing folder that holds `<dataset>/dt=YYYY-MM-DD/` partitions ($REFILL_LANDING)."""
    return _resolve(os.environ.get("REFILL_LANDING", DEFAULT_LANDING))


def warehouse_path() -> Path:
    """The DuckDB warehouse file ($REFILL_WAREHOUSE)."""
    return _resolve(os.environ.get("REFILL_WAREHOUSE", DEFAULT_WAREHOUSE))


def _resolve(raw: str) -> Path:
    # Relative paths are relative to the project, as dbt resolves them: the same
    # value means the same file whether a command starts here or in a subfolder.
    path = Path(raw).expanduser()
    return path if path.is_absolute() else project_dir() / path


# The deployments' retry delays (prefect.yaml's retry_delay_seconds), in seconds: the board
# estimates a failed day's next retry with them.
DEPLOYMENT_RETRY_DELAYS = (300, 600)
