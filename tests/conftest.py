from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from refill.warehouse.dbt_runner import DbtProject

# Properties (tests/properties/) run under one of two profiles. "ci" is the suite's: the
# same examples on every run (derandomized), bounded, no deadline (a dbt build per example
# is seconds on a shared machine). "long" is `make fuzz`: a random search, many more
# examples, for the closing notes (FUZZ_EXAMPLES sets how many, 500 unless told; each
# property scales it as it scales the "ci" count). HYPOTHESIS_PROFILE chooses; the suite
# defaults to "ci".
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
    "long",
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "500")),
    deadline=None,
    suppress_health_check=_SLOW_EXAMPLES,
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Prefect's telemetry has no network to reach here and no business in tests.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")


TESTS = Path(__file__).resolve().parent

# -- Tiers ---------------------------------------------------------------------------------
# Every test is in exactly one tier (pyproject.toml's markers say what each holds), decided
# here and in this order: a `slow` marker on the test; else its folder, where the folder is
# a tier's; else (a folder grouped by feature: board, bench, properties) what it uses: the
# Prefect test server makes it `flows`, anything else `dbt`. Only tests/unit is pure: the
# one folder `make check` collects, and the one checked to import neither Prefect nor dbt.
TIERS = ("pure", "dbt", "flows", "harness", "spark", "slow")
FOLDER_TIERS = {
    "unit": "pure",
    "dbt": "dbt",
    "flows": "flows",
    "harness": "harness",
    "spark": "spark",
}
# The tiers from the costliest test to the cheapest (the order of pytest-xdist's work).
COST_ORDER = ("harness", "slow", "spark", "flows", "dbt", "pure")


def tier_of(item: pytest.Item) -> str:
    marked = {mark.name for mark in item.iter_markers() if mark.name in TIERS}
    folder = item.path.relative_to(TESTS).parts[0] if item.path.is_relative_to(TESTS) else ""
    tier = FOLDER_TIERS.get(folder)
    if marked - {"slow", tier}:
        raise pytest.UsageError(
            f"{item.nodeid}: marked {', '.join(sorted(marked))}; a test's tier is its "
            f"folder's ({folder}: {tier}) or `slow`: move the file to the folder of its tier"
        )
    if "slow" in marked:
        if tier == "pure":
            raise pytest.UsageError(f"{item.nodeid}: tests/unit holds pure tests only")
        return "slow"
    if tier is None:
        tier = "flows" if "prefect_harness" in item.fixturenames else "dbt"
    return tier


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tiers = {item: tier_of(item) for item in items}
    for item, tier in tiers.items():
        item.add_marker(getattr(pytest.mark, tier))
    config.stash[_ONLY_PURE] = bool(items) and set(tiers.values()) == {"pure"}
    if not config.stash[_ONLY_PURE]:
        # Prefect binds its console log handler to the stderr of the moment it is first
        # imported: imported here, once collected, not first inside a test whose captured
        # stderr is closed after it. Not for the pure tier, which runs without it.
        import prefect.main  # noqa: F401
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # pytest-xdist hands the workers the units of work in the order collected (every
        # worker collects the same, sorted alike): the costliest tier's files first, so
        # that short ones fill in at the end. A file's rank is its costliest test's.
        rank: dict[Path, int] = {}
        for item, tier in tiers.items():
            rank[item.path] = min(rank.get(item.path, len(COST_ORDER)), COST_ORDER.index(tier))
        items.sort(key=lambda item: rank[item.path])


_ONLY_PURE = pytest.StashKey[bool]()


# A unit of work of pytest-xdist is a test file (its module fixtures are built once), or
# several files whose tests must not run beside each other:
SHARED_UNITS = {
    # one worker, so that one Spark session serves every Spark test
    "tests/spark": "spark",
    # the bench runs its commands on the checkout's own dbt target folder (it drops
    # DBT_TARGET_PATH) and measures them; the harness's CI budget keeps two processes of
    # its own busy: beside it, at load 17, the quick bench overran its 600 s
    "tests/bench": "bench, harness",
    "tests/harness/test_harness.py": "bench, harness",
}


def work_unit(nodeid: str) -> str:
    path = nodeid.split("::")[0]
    for prefix, unit in SHARED_UNITS.items():
        if path == prefix or path.startswith(prefix + "/"):
            return unit
    return path


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """With `-n` (make test): the tests handed out by work_unit, in the order collected.
    Done here, not with xdist_group marks: --dist loadgroup ignores them on pytest 9.2
    (pytest-xdist issue 1386)."""
    if config.getvalue("dist") not in ("load", "loadgroup"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    config.option.loadscopereorder = False
    return ByWorkUnit(config, log)


def pytest_configure(config: pytest.Config) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    # What the tests of one process share outside their tmp_path is kept per worker:
    # dbt's target folder (partial_parse.msgpack, the code-version cache, compiled SQL;
    # relative, so each copy of the project has its own) and Prefect's home (the database
    # of every temporary server a `refill` child starts when no API is set).
    target = Path(os.environ.get("DBT_TARGET_PATH", "target")) / f"pytest-{worker}"
    os.environ["DBT_TARGET_PATH"] = str(target)
    home = tempfile.mkdtemp(prefix=f"refill-tests-prefect-{worker}-")
    os.environ["PREFECT_HOME"] = home
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))


# Where the suite's time goes: seconds per tier, per worker and for the costliest files,
# summed over every test's setup, call and teardown, printed after the run (the per-tier
# figures of docs/testing.md).
_SECONDS_BY_TIER: dict[str, list[float]] = {}
_SECONDS_BY_WORKER: dict[str, float] = {}
_SECONDS_BY_FILE: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # a test's keywords hold its tier's mark and its folders' names: `slow` decides first
    tier = next((name for name in ("slow", *TIERS) if name in report.keywords), "other")
    seconds = _SECONDS_BY_TIER.setdefault(tier, [0.0, 0])
    seconds[0] += report.duration
    seconds[1] += report.when == "call"
    worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", "main")
    _SECONDS_BY_WORKER[worker] = _SECONDS_BY_WORKER.get(worker, 0.0) + report.duration
    path = report.nodeid.split("::")[0]
    _SECONDS_BY_FILE[path] = _SECONDS_BY_FILE.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER") or not _SECONDS_BY_TIER:
        return
    tiers = sorted(_SECONDS_BY_TIER.items(), key=lambda item: -item[1][0])
    terminalreporter.write_sep("=", "seconds per tier (setup, call and teardown, summed)")
    for tier, (seconds, tests) in tiers:
        terminalreporter.write_line(f"{tier:>8}: {seconds:7.0f} s over {tests} test(s)")
    busy = ", ".join(f"{w} {s:.0f} s" for w, s in sorted(_SECONDS_BY_WORKER.items()))
    terminalreporter.write_line(f"busy per worker: {busy}")
    costliest = sorted(_SECONDS_BY_FILE.items(), key=lambda item: -item[1])[:15]
    terminalreporter.write_line("costliest files:")
    for path, seconds in costliest:
        terminalreporter.write_line(f"  {seconds:7.0f} s  {path}")


@pytest.fixture(autouse=True)
def _pure_tests_stay_pure(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """A pure test starts no child process; in a session of pure tests only (make check),
    Prefect or dbt imported after a test was imported by it (or by its module)."""
    if request.node.get_closest_marker("pure") is None:
        yield
        return
    monkeypatch.setattr(subprocess.Popen, "_execute_child", _no_child_process)
    yield
    if request.config.stash.get(_ONLY_PURE, False):
        loaded = sorted({"prefect", "dbt"} & sys.modules.keys())
        assert not loaded, f"a pure test imported {' and '.join(loaded)}: move it out of tests/unit"


def _no_child_process(*args, **kwargs):
    raise AssertionError("a pure test starts no child process: move it out of tests/unit")


@dataclass
class Workspace:
    """A test's own landing folder and warehouse file."""

    landing: Path
    warehouse: Path


@pytest.fixture(scope="session")
def dbt_project() -> DbtProject:
    """One parsed manifest for the whole session, as a flow run has."""
    from refill.warehouse.dbt_runner import DbtProject

    return DbtProject()


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    landing = tmp_path / "landing"
    warehouse = tmp_path / "warehouse" / "refill.duckdb"
    landing.mkdir()
    monkeypatch.setenv("REFILL_LANDING", str(landing))
    monkeypatch.setenv("REFILL_WAREHOUSE", str(warehouse))
    # a preview's reports go to the test's folder, not to previews/ in the checkout
    monkeypatch.setenv("REFILL_PREVIEWS", str(tmp_path / "previews"))
    return Workspace(landing, warehouse)


@pytest.fixture(scope="session")
def prefect_harness():
    """A temporary Prefect server and database for the session's flow runs."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield
