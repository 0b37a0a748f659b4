"""Where things live. Every path comes from the environment with a default, never hard-coded."""

from __future__ import annotations

import importlib.metadata
import os
import re
from pathlib import Path

from refill.errors import UsageError

# The source checkout this package was imported from (an editable install, or a run from
# the project folder). A non-editable install has no dbt project here: REFILL_PROJECT_DIR.
PACKAGE_PROJECT_DIR = Path(__file__).resolve().parent.parent
PROJECT_DIR_ENV = "REFILL_PROJECT_DIR"
DEFAULT_LANDING = "data/landing"
DEFAULT_WAREHOUSE = "warehouse/refill.duckdb"
# The engine follows dbt's target (profiles.yml reads the same variable, `--target` in
# plain dbt): `dev` unless DBT_TARGET names another. Each target of profiles.yml, its engine
# and its default warehouse (REFILL_WAREHOUSE overrides it); `duckdb` is `dev`'s former name.
# On Spark the warehouse is a folder (tables, locks, Spark's own).
TARGET_ENV = "DBT_TARGET"
DEFAULT_TARGET = "dev"
ENGINES = ("duckdb", "spark", "spark-cluster")
TARGETS = {
    "dev": ("duckdb", DEFAULT_WAREHOUSE),
    "duckdb": ("duckdb", DEFAULT_WAREHOUSE),
    "ci": ("duckdb", "warehouse/ci.duckdb"),
    "prod": ("duckdb", "warehouse/prod.duckdb"),
    "spark": ("spark", None),
    "spark-cluster": ("spark-cluster", None),
}
# An engine's dbt adapter (its distribution) and the extra that installs it (pyproject.toml).
ADAPTERS = {
    "duckdb": ("dbt-duckdb", None),
    "spark": ("dbt-spark", "spark"),
    "spark-cluster": ("dbt-spark", "spark-cluster"),
}
DEFAULT_SPARK_WAREHOUSE = "warehouse/spark"
# On a cluster the tables live in its metastore; this folder holds refill's locks only.
DEFAULT_SPARK_CLUSTER_FOLDER = "warehouse/spark-cluster"
DEFAULT_DEMO_FOLDER = "data/demo"

# The landing datasets and the models built from them are the dbt project's to name (the
# models' `meta: {refill: ...}`, read by refill.warehouse.catalog), not Python's.

# -- run defaults: the command line, the flows and prefect.yaml read these ----------------
# (tests/flows/test_defaults.py holds the three to them). A command behaves the same
# whether a person or the scheduler starts it; the one difference is named below.

# Attempts per chunk, and the pauses between them. Only a transient failure (the warehouse
# busy, an I/O error) is retried; 5 then 10 minutes outlasts a chunk of another run.
RETRIES = 3
RETRY_DELAY_SECONDS = (300.0, 600.0)

# How long a run waits for the warehouse lock on each attempt (--lock-wait). A daily run
# has the live priority: it waits only for the chunk in flight, and must fail in time to
# page before readers look. A backfill is history: it queues behind live runs and the
# chunks of another backfill, and a wait costs less than a failed chunk to rerun.
DAILY_LOCK_WAIT_SECONDS = 900.0
BACKFILL_LOCK_WAIT_SECONDS = 3600.0
# Bookkeeping (the run log, an attempt, the outbox) waits at least this long, even when
# the run's own --lock-wait was shorter: a lock timeout must still be accounted for.
BOOKKEEPING_LOCK_WAIT_SECONDS = 120.0
# A short command run by hand (a cutover, the board) waits for a build in progress, not
# for hours.
COMMAND_LOCK_WAIT_SECONDS = 120.0

# Waiting for a day's export: the scheduled daily run and `backfill --on-missing wait`
# wait up to 3 hours, checking every 5 minutes (a check reads every part file of the day).
READY_WAIT_SECONDS = 3 * 3600.0
READY_POLL_SECONDS = 300.0
# `refill daily` by hand answers now whether the day is there (--wait 0); the schedule
# waits for a late export (READY_WAIT_SECONDS). The one default that differs by who starts it.
DAILY_BY_HAND_WAIT_SECONDS = 0.0

# A backfill's plan. A chunk is one dbt invocation. It closes at CHUNK_LINES landed lines
# (memory follows lines, not days: a chunk of 500,000 lines peaks near 0.55 GiB) or at
# CHUNK_DAYS days, whichever comes first. Each chunk pays about a second of work that does
# not depend on its size (a dbt invocation, four models' audits and ledger rows, ~25
# window-scoped tests, a checkpoint): at 500,000 lines (46 days at the example's 10,000 lines a day)
# that keeps a 30-day range's cost per day within 30% of a year's with room to spare
# (measured +18%; 600,000 lines measured +29% and no faster within noise). Measured in
# docs/performance.md.
CHUNK_DAYS = 92
CHUNK_LINES = 500_000
# On an engine with concurrent writers (Spark), --max-concurrency chunks run at once, each
# holding one slot of this Prefect global concurrency limit (created with WAREHOUSE_SLOTS
# when missing; an operator may change it), so every backfill on the warehouse shares them.
WAREHOUSE_LIMIT_NAME = "refill-warehouse"
WAREHOUSE_SLOTS = 2
BACKFILL_ORDER = "newest-first"  # yesterday's numbers are the ones readers look at first
ON_MISSING = "fail"  # a day not ready stops the backfill before its chunk

# A restatement preview (`backfill --preview`) is kept this long for `--from-preview ID`;
# then it is refused and dropped: a week covers a sign-off over a weekend, and the kept
# chunks cost as much space as the days they restate.
PREVIEW_KEEP_DAYS = 7
# Where a preview's report (report.json, .md, .html) is saved, one folder per preview id
# ($REFILL_PREVIEWS, or --report-dir).
DEFAULT_PREVIEW_REPORTS = "previews"

# DuckDB's memory limit in dbt's sessions: a budget, past which DuckDB spills a statement's
# work to disk instead of growing (a day cannot be split, and without a limit, DuckDB's 80%
# of the RAM, staging one day of 2,000,000 lines held 0.98 GiB in DuckDB alone, 10,000,000
# lines five times that). Set as a size in DuckDB's form ("512MB", "2GB", "768MiB") or as a
# share of the machine's memory ("5%"), by REFILL_DUCKDB_MEMORY_LIMIT or, under it, by the
# dbt plugin's `memory_limit` in profiles.yml; "" leaves DuckDB's own default. The default,
# 2% of the machine's memory (491 MiB on the 24 GiB machine of docs/performance.md), keeps a
# cold `refill backfill` of a 2,000,000- or 10,000,000-line day, Python and the temporary
# Prefect server included, under 1 GiB there; a budget that holds the day spills nothing and
# costs less CPU (measured in docs/performance.md, "A big day").
DUCKDB_MEMORY_LIMIT_ENV = "REFILL_DUCKDB_MEMORY_LIMIT"
DEFAULT_DUCKDB_MEMORY_LIMIT = "2%"
MIN_DUCKDB_MEMORY_BYTES = 128 * 2**20  # below it DuckDB spills even a small chunk's joins
_MEMORY_LIMIT = re.compile(r"[0-9]{1,9}(\.[0-9]{1,3})? ?([KMGT]i?B|B)", re.ASCII)
_MEMORY_SHARE = re.compile(r"([0-9]{1,2}(\.[0-9]{1,2})?|100) ?%", re.ASCII)


def duckdb_memory_limit(profile_setting: str | None = None) -> str | None:
    """DuckDB's memory limit, validated here (it reaches SQL as a bound value): the size
    REFILL_DUCKDB_MEMORY_LIMIT says, else the profile's (`profile_setting`), else the
    default share; a share becomes a size of the machine's memory. None: DuckDB's default."""
    from_env = os.environ.get(DUCKDB_MEMORY_LIMIT_ENV)
    source = DUCKDB_MEMORY_LIMIT_ENV if from_env is not None else "the profile's memory_limit"
    raw = from_env if from_env is not None else profile_setting
    if raw is None:
        source, raw = "the default", DEFAULT_DUCKDB_MEMORY_LIMIT
    raw = str(raw).strip()
    if not raw:
        return None
    if _MEMORY_LIMIT.fullmatch(raw):
        return raw
    share = _MEMORY_SHARE.fullmatch(raw)
    if share and float(share[1]) > 0:
        limit = max(round(machine_memory_bytes() * float(share[1]) / 100), MIN_DUCKDB_MEMORY_BYTES)
        return f"{limit // 2**20}MiB"
    raise UsageError(f"{source}={raw[:40]!r} is not a size like 512MB or 2GB, nor a share like 5%")


def machine_memory_bytes() -> int:
    """The memory this process may use: the machine's, or its container's limit if lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


# -- views ---------------------------------------------------------------------------------
STATUS_DAYS = 14  # `refill status` and `gaps` without --start: the last two weeks
MIN_HOLE_HOURS = 3  # hours without events inside a landed day that count as a hole
BOARD_PORT = 8765  # `refill board --serve`, on 127.0.0.1


def project_dir() -> Path:
    """The dbt project folder, found as dbt finds its own: $REFILL_PROJECT_DIR when set (as
    dbt's DBT_PROJECT_DIR or --project-dir), else the working directory or its nearest parent
    holding refill's dbt_project.yml (so a command run in another checkout uses that
    checkout), else the checkout this package lives in.

    A Prefect worker, a non-editable install or the harness's patched copy of the project
    name it in the environment; a checkout needs nothing set."""
    return _found_project()[0]


def _found_project() -> tuple[Path, str]:
    raw = os.environ.get(PROJECT_DIR_ENV)
    if raw:
        folder = Path(raw).expanduser().resolve()
        source = f"{PROJECT_DIR_ENV}={raw}"
    else:
        cwd = Path.cwd().resolve()
        found = next((p for p in (cwd, *cwd.parents) if _is_refill_project(p)), None)
        folder, source = (
            (found, "the working directory")
            if found
            else (PACKAGE_PROJECT_DIR, "the package's checkout")
        )
    if not (folder / "dbt_project.yml").is_file():
        raise UsageError(
            f"no dbt project at {source} {folder} (no dbt_project.yml); "
            f"set {PROJECT_DIR_ENV} to the refill project folder"
        )
    return folder, source


def _is_refill_project(folder: Path) -> bool:
    try:
        text = (folder / "dbt_project.yml").read_text()
    except OSError:
        return False
    return re.search(r"^name:\s*[\"']?refill[\"']?\s*$", text, re.MULTILINE) is not None


def where_line() -> str:
    """Which project, target and warehouse a command uses, and why (for --help and status);
    a configuration that cannot be used raises its UsageError."""
    folder, source = _found_project()
    target = target_name()
    return f"project {folder} (from {source}), target {target}, warehouse {warehouse_path()}"


def landing_root() -> Path:
    """The landing folder that holds `<dataset>/dt=YYYY-MM-DD/` partitions ($REFILL_LANDING)."""
    return _resolve(os.environ.get("REFILL_LANDING", DEFAULT_LANDING))


def warehouse_path() -> Path:
    """Where the engine's warehouse is: the DuckDB file ($REFILL_WAREHOUSE), or on Spark
    the warehouse folder ($REFILL_SPARK_WAREHOUSE, spark_warehouse_path)."""
    if engine_name() in ("spark", "spark-cluster"):
        return spark_warehouse_path()
    return _resolve(os.environ.get("REFILL_WAREHOUSE", TARGETS[target_name()][1]))


def preview_report_dir(override: str | None = None) -> Path:
    """Where preview reports are saved: --report-dir, else $REFILL_PREVIEWS, else
    `previews/` in the project."""
    return _resolve(override or os.environ.get("REFILL_PREVIEWS", DEFAULT_PREVIEW_REPORTS))


def target_name() -> str:
    """The dbt target refill and dbt use ($DBT_TARGET, `dev` by default): one of profiles.yml's
    outputs, refused in one line (a configuration error, exit 2) when unknown or when its
    adapter is not installed."""
    target = os.environ.get(TARGET_ENV, DEFAULT_TARGET).strip() or DEFAULT_TARGET
    if target not in TARGETS:
        raise UsageError(
            f"{TARGET_ENV} {target!r} is not a target of profiles.yml "
            f"(targets: {', '.join(TARGETS)})"
        )
    package, extra = ADAPTERS[TARGETS[target][0]]
    try:
        importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        install = f"pip install -e '.[{extra}]'" if extra else f"pip install {package}"
        raise UsageError(
            f"target {target!r} needs the {package} adapter, not installed: {install}"
        ) from None
    return target


def engine_name() -> str:
    """The engine refill runs on: the engine of the dbt target (target_name).
    The one home of the choice: the warehouse boundary and the planner read it here."""
    return TARGETS[target_name()][0]


def spark_warehouse_path() -> Path:
    """The Spark warehouse folder ($REFILL_SPARK_WAREHOUSE): on `spark` the tables, the
    locks and Spark's files; on `spark-cluster` refill's locks only (the tables are the
    cluster's)."""
    default = DEFAULT_SPARK_CLUSTER_FOLDER if engine_name() == "spark-cluster" else None
    return _resolve(os.environ.get("REFILL_SPARK_WAREHOUSE", default or DEFAULT_SPARK_WAREHOUSE))


def _resolve(raw: str) -> Path:
    # Relative paths are relative to the project, as dbt resolves them: the same
    # value means the same file whether a command starts here or in a subfolder.
    path = Path(raw).expanduser()
    return path if path.is_absolute() else project_dir() / path
