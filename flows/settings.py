"""Where things live. Every path comes from the environment with a default, never hard-coded."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
DEFAULT_LANDING = "data/landing"
DEFAULT_WAREHOUSE = "warehouse/refill.duckdb"


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
    return path if path.is_absolute() else PROJECT_DIR / path
