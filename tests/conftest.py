from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Properties (tests/properties/) run under one of two profiles. "ci" is the suite's: the
# same examples on every run (derandomized), bounded, no deadline (a dbt build per example
# is seconds on a shared machine). "long" is `make fuzz`: a random search, many more
# examples, for the closing notes. HYPOTHESIS_PROFILE chooses; the suite defaults to "ci".
_SLOW_EXAMPLES = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=25,
    deadline=None,
    suppress_health_check=_SLOW_EXAMPLES,
    print_blob=True,
)
settings.register_profile(
    "long", max_examples=500, deadline=None, suppress_health_check=_SLOW_EXAMPLES, print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Prefect's telemetry has no network to reach here and no business in tests.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")

# Prefect binds its console log handler to the stderr of the moment it is first imported.
# Imported here, with the session, not inside a test whose captured stderr is closed after
# it (refill.cli no longer imports Prefect; a file run alone first imported it in a test).
import prefect.main  # noqa: E402, F401

from refill.warehouse.dbt_runner import DbtProject  # noqa: E402


@dataclass
class Workspace:
    """A test's own landing folder and warehouse file."""

    landing: Path
    warehouse: Path


@pytest.fixture(scope="session")
def dbt_project() -> DbtProject:
    """One parsed manifest for the whole session, as a flow run has."""
    return DbtProject()


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    landing = tmp_path / "landing"
    warehouse = tmp_path / "warehouse" / "refill.duckdb"
    landing.mkdir()
    monkeypatch.setenv("REFILL_LANDING", str(landing))
    monkeypatch.setenv("REFILL_WAREHOUSE", str(warehouse))
    return Workspace(landing, warehouse)


@pytest.fixture(scope="session")
def prefect_harness():
    """A temporary Prefect server and database for the session's flow runs."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield
