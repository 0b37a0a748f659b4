"""dbt, in-process: one parsed manifest per flow run, no new process or re-parse per chunk.

A dbt CLI start costs about 3 s; an in-process invocation on a parsed manifest
about 0.15 s. A year of daily chunks must pay the second, not the first.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from flows import settings


class DbtError(RuntimeError):
    """A dbt invocation failed; the message is dbt's first error, on one line."""


@dataclass
class BuildOutcome:
    """What one `dbt build` of a window did."""

    success: bool
    message: str  # the first error on one line, or "ok"
    statuses: dict[str, str] = field(default_factory=dict)  # node name -> success/error/skipped/...


def window_vars(
    start: date,
    end: date,
    run_id: str | None = None,
    is_backfill: bool = False,
    allow_wide_window: bool = False,
) -> dict:
    """The dbt vars of a window build: the one shape the flows pass to dbt."""
    variables: dict = {"start_date": start.isoformat(), "end_date": end.isoformat()}
    if run_id:
        variables["refill_run_id"] = run_id
    if is_backfill:
        variables["refill_is_backfill"] = True
    if allow_wide_window:
        variables["allow_wide_window"] = True
    return variables


def export_paths() -> None:
    """Point dbt at the same landing and warehouse as the flows, as absolute paths.

    dbt resolves a relative path against the working directory, the flows against
    the project; exporting the resolved paths makes both read the same files.
    """
    os.environ["REFILL_LANDING"] = settings.landing_root().as_posix()
    warehouse = settings.warehouse_path()
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    os.environ["REFILL_WAREHOUSE"] = warehouse.as_posix()


class DbtProject:
    """The refill dbt project, parsed once and invoked in-process."""

    def __init__(self, project_dir: Path = settings.PROJECT_DIR, quiet: bool = True):
        self.project_dir = project_dir
        self.quiet = quiet
        self._manifest = None

    def _common_args(self) -> list[str]:
        args = ["--project-dir", str(self.project_dir), "--profiles-dir", str(self.project_dir)]
        args += ["--log-path", str(self.project_dir / "logs")]
        target = os.environ.get("DBT_TARGET")
        if target:
            args += ["--target", target]
        return args

    @property
    def manifest(self):
        if self._manifest is None:
            from dbt.cli.main import dbtRunner

            export_paths()
            result = dbtRunner().invoke(["parse", *self._log_flags(), *self._common_args()])
            if not result.success:
                raise DbtError(f"dbt parse failed: {_one_line(result.exception)}")
            self._manifest = result.result
        return self._manifest

    def invoke(self, command: list[str]):
        """Run one dbt command in-process on the parsed manifest."""
        from dbt.cli.main import dbtRunner

        export_paths()
        try:
            return dbtRunner(manifest=self.manifest).invoke(
                [*command[:1], *self._log_flags(), *command[1:], *self._common_args()]
            )
        finally:
            release_warehouse()

    def _log_flags(self) -> list[str]:
        # refill reports outcomes itself, on one line; dbt's full log stays in logs/dbt.log.
        return ["--log-level", "none"] if self.quiet else []

    def build(
        self,
        variables: dict,
        select: str | None = None,
        full_refresh: bool = False,
        include_seeds: bool = True,
    ) -> BuildOutcome:
        """`dbt build` of a window; returns a BuildOutcome (never raises on a failed model).

        dbt unit tests are left to CI (`dbt test --select test_type:unit`): they check
        the code, not the data, and would cost every chunk of a backfill the same again.
        A flow that loaded the seeds once passes include_seeds=False for its chunks.
        """
        command = ["build", "--vars", json.dumps(variables), "--exclude-resource-type", "unit_test"]
        if not include_seeds:
            command.append("seed")
        if select:
            command += ["--select", select]
        if full_refresh:
            command.append("--full-refresh")
        result = self.invoke(command)
        return outcome_of(result)

    def run_operation(self, macro: str, args: dict | None = None) -> None:
        command = ["run-operation", macro]
        if args:
            command += ["--args", json.dumps(args)]
        result = self.invoke(command)
        if not result.success:
            raise DbtError(f"dbt run-operation {macro} failed: {outcome_of(result).message}")

    def code_versions(self, models: list[str]) -> dict[str, str]:
        """The current code version of each model, as dbt computes it (refill_code_version)."""
        manifest = self.manifest
        versions = {}
        for node in manifest.nodes.values():
            if node.resource_type == "model" and _relation_name(node) in models:
                expression = f"{{{{ refill_code_version('{node.unique_id}') }}}}"
                result = self.invoke(["compile", "--inline", expression])
                if not result.success:
                    raise DbtError(f"dbt could not compute the code version of {node.name}")
                versions[_relation_name(node)] = result.result.results[0].node.compiled_code.strip()
        return versions


def release_warehouse() -> None:
    """Close the DuckDB file dbt-duckdb keeps open in this process after an invocation.

    DuckDB lets one process write a file; holding it between invocations would lock
    out a daily run waiting between a backfill's chunks, and this process's own
    read-only connections.
    """
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    environment = DuckDBConnectionManager._ENV
    if environment is not None:
        try:
            environment.close()
        finally:
            DuckDBConnectionManager._ENV = None


def _relation_name(node) -> str:
    """The table a model writes (a versioned model writes <name>_v<version>)."""
    return node.alias or node.name


def outcome_of(result) -> BuildOutcome:
    if result.exception is not None:
        return BuildOutcome(False, _one_line(result.exception))
    statuses: dict[str, str] = {}
    first_error = None
    for node_result in getattr(result.result, "results", []) or []:
        status = str(node_result.status)
        statuses[node_result.node.name] = status
        if first_error is None and status in ("error", "fail", "runtime error"):
            first_error = f"{node_result.node.name}: {_one_line(node_result.message)}"
    if not result.success and first_error is None:
        first_error = "dbt failed without a node error (see dbt's log)"
    return BuildOutcome(result.success, first_error or "ok", statuses)


def _one_line(error) -> str:
    text = " ".join(str(error).split())
    text = text.split(" > in macro ")[0].split(" > called by ")[0]
    for prefix in ("Compilation Error in", "Runtime Error in"):
        if prefix in text and ")" in text:
            # dbt's frame ("Compilation Error in model x (path)") before the message itself
            text = text.split(")", 1)[1].strip() or text
    return text
