"""dbt, in-process: one parsed manifest per flow run, no new process or re-parse per chunk.

Named dbt_runner, not dbt: Prefect puts an entrypoint's folder (flows/) first on sys.path,
where a module named dbt would hide the dbt package itself.

A dbt CLI start costs about 3 s; an in-process invocation on a parsed manifest
about 0.15 s. A year of daily chunks must pay the second, not the first.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from refill import settings
from refill.code_version import content_sha256
from refill.errors import UsageError
from refill.rules.catalog import Catalog
from refill.rules.failures import classify_failure
from refill.warehouse.catalog import read_catalog, seed_file
from refill.warehouse.dbt_outcomes import BuildOutcome, one_line, outcome_of


class DbtError(RuntimeError):
    """A dbt invocation failed; the message is dbt's first error, on one line."""


def export_paths() -> None:
    """Point dbt at the same landing and warehouse as the flows, as absolute paths.

    dbt resolves a relative path against the working directory, the flows against
    the project; exporting the resolved paths makes both read the same files.
    """
    os.environ["REFILL_LANDING"] = settings.landing_root().as_posix()
    warehouse = settings.warehouse_path()
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    os.environ["REFILL_WAREHOUSE"] = warehouse.as_posix()


def node_errors_into(errors: dict[str, str]):
    """A dbt callback keeping each node's error message by unique id: an ephemeral model's
    error (the raw lines model's refusal) is in no result, only in this event, and its
    reader's result says just that it was skipped because of it."""

    def keep(event) -> None:
        if event.info.name == "RunResultError":
            node = getattr(getattr(event.data, "node_info", None), "unique_id", "")
            if node and node not in errors:
                errors[node] = str(event.info.msg)

    return keep


def forget_compiled_ctes(manifest) -> None:
    """Undo what an earlier invocation's compile left on the shared manifest's nodes: dbt
    injects an ephemeral model's CTE into a node once and marks it so (extra_ctes_injected),
    expecting a manifest per process, so a second invocation on the same manifest would
    compile the node without the CTE it reads (the raw lines model is ephemeral:
    refill_read_landed_lines)."""
    for node in manifest.nodes.values():
        if getattr(node, "extra_ctes_injected", False):
            node.extra_ctes_injected = False
            node.extra_ctes = []


class DbtProject:
    """The refill dbt project, parsed once and invoked in-process."""

    def __init__(self, project_dir: Path | None = None, quiet: bool = True):
        self.project_dir = project_dir or settings.project_dir()
        self.quiet = quiet
        self._manifest = None
        self._code_versions: tuple[str, dict[str, str]] | None = None  # (key, versions)
        self._catalog: Catalog | None = None
        self._audits_twins: dict[str, str] | None = None

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
            # --no-write-json: refill's commands do not write dbt's JSON artifacts (~0.3 s
            # for manifest.json here, 0.2 s per build); partial parsing's own
            # target/partial_parse.msgpack is still written. `dbt parse` by hand writes them.
            command = ["parse", "--no-write-json", *self._log_flags(), *self._common_args()]
            result = dbtRunner().invoke(command)
            if not result.success:
                raise DbtError(f"dbt parse failed: {one_line(result.exception)}")
            self._manifest = result.result
        return self._manifest

    def invoke(self, command: list[str], callbacks: list | None = None):
        """Run one dbt command in-process on the parsed manifest (`callbacks`: dbt's, each
        called with every event the command fires)."""
        from dbt.cli.main import dbtRunner

        export_paths()
        forget_compiled_ctes(self.manifest)
        errors: dict[str, str] = {}
        try:
            result = dbtRunner(
                manifest=self.manifest, callbacks=[*(callbacks or []), node_errors_into(errors)]
            ).invoke([*command[:1], *self._log_flags(), *command[1:], *self._common_args()])
        finally:
            release_warehouse()
        result.node_errors = errors  # read by outcome_of
        return result

    def _log_flags(self) -> list[str]:
        # refill reports outcomes itself, on one line; dbt's full log stays in logs/dbt.log.
        return ["--log-level", "none"] if self.quiet else []

    def build(
        self,
        variables: dict,
        selection: Selection | None = None,
        full_refresh: bool = False,
        include_seeds: bool = True,
    ) -> BuildOutcome:
        """`dbt build` of a window, of `selection` (None: the whole project); returns a
        BuildOutcome (never raises on a failed model).

        dbt unit tests are left to CI (`dbt test --select test_type:unit`): they check
        the code, not the data, and would cost every chunk of a backfill the same again.
        A flow that loaded the seeds once passes include_seeds=False for its chunks.

        --no-write-json: dbt's manifest.json and run_results.json are not rewritten per
        chunk (0.2 s each time, measured in docs/performance.md); a chunk's outcome is
        in ops.partition_attempts and its detail in logs/dbt.log.

        The data tests that repeat an audit of a model this build writes are left out
        (audits_twins): the audit made the same check on the same shadow. A dbt node
        costs a chunk about 0.02 s whatever its query (docs/performance.md).
        """
        command = ["build", "--vars", json.dumps(variables), "--no-write-json"]
        # one list per option: a value appended after another option's list joins that one
        # (`--exclude twin seed` would reload the seeds in every chunk)
        command += ["--exclude-resource-type", "unit_test", *([] if include_seeds else ["seed"])]
        twins = self._twins_of_built_models(selection)
        if twins:
            command += ["--exclude", *twins]
        if selection is not None and selection.select:
            command += ["--select", selection.select]
        if full_refresh:
            command.append("--full-refresh")
        result = self.invoke(command)
        return outcome_of(result)

    def run_operation(self, macro: str, arguments: dict, variables: dict) -> BuildOutcome:
        """`dbt run-operation` of one of the project's macros; its failure carries the macro's
        own error (dbt reports it only as a log event, which refill's quiet log drops)."""
        errors: list[str] = []

        def caught(event) -> None:
            if event.info.name in ("RunningOperationCaughtError", "RunningOperationUncaughtError"):
                errors.append(str(event.data.exc))

        command = ["run-operation", macro, "--args", json.dumps(arguments)]
        result = self.invoke([*command, "--vars", json.dumps(variables)], callbacks=[caught])
        if result.success:
            return BuildOutcome(True, "ok")
        cause = errors[0] if errors else str(result.exception or "")
        step, failure_class, transient = classify_failure(cause, "operation", macro)
        message = one_line(cause) or "dbt run-operation failed without an error (see logs/dbt.log)"
        return BuildOutcome(False, message, {}, step, failure_class, transient)

    def audits_twins(self) -> dict[str, str]:
        """The data tests that check what an audit of their model checks (test name -> the
        model's file): a test whose config meta names `repeats_audit: <audit macro>`,
        attached to a partitioned model whose post-hooks call that macro. A test naming an
        audit its model does not run is no twin: it keeps running."""
        if self._audits_twins is None:
            self._audits_twins = audits_twins(self.manifest.nodes)
        return self._audits_twins

    def _twins_of_built_models(self, selection: Selection | None) -> list[str]:
        """The audits' twins of the models a build of `selection` writes: all of them for
        the whole project, else those of the models whose files it names (`model_files`,
        resolve_selection's). A selection that names none leaves none out: a test of a
        model the build does not write checks what is published, which no audit of the
        build does."""
        whole_project = selection is None or selection.select is None
        written = set() if whole_project else set(selection.model_files)
        return sorted(
            name
            for name, model_file in self.audits_twins().items()
            if whole_project or model_file in written
        )

    @property
    def catalog(self) -> Catalog:
        """The datasets and versioned marts the models declare (refill.warehouse.catalog)."""
        if self._catalog is None:
            self._catalog = read_catalog(self.manifest)
        return self._catalog

    @property
    def adapter_type(self) -> str:
        return self.manifest.metadata.adapter_type or "duckdb"

    def partitioned_models(self) -> dict[str, object]:
        """Models written partition by partition (config partition_column), by relation name."""
        return {
            _relation_name(node): node
            for node in self.manifest.nodes.values()
            if node.resource_type == "model" and node.config.get("partition_column")
        }

    def resolve_selection(self, select: str | None) -> Selection:
        """What a backfill of `select` rebuilds: the models it selects (dbt resolves the
        selection: several selectors, `+`, `@`, tags, paths, `state:` with DBT_STATE), every
        model downstream of ANY of them (no mart is left behind its facts: they publish in
        the same commit), and the staging they read in the same window."""
        partitioned = self.partitioned_models()
        if not select:
            return Selection(None, sorted(partitioned))
        result = self.invoke(["ls", "--select", select, "--output", "json"])
        if not result.success:
            cause = one_line(result.exception) if result.exception else "dbt ls failed"
            raise UsageError(f"--select {select!r} is not a valid dbt selection: {cause}")
        selected = {json.loads(line)["unique_id"] for line in result.result}
        rebuilt = self._with_descendants(selected)
        chosen = [
            node
            for unique_id, node in sorted(self.manifest.nodes.items())
            if unique_id in rebuilt and node.resource_type == "model"
        ]
        if not chosen:
            raise UsageError(f"--select {select!r} matches no model")
        model_files = tuple(sorted(node.original_file_path for node in chosen))
        paths = {f"path:{model_file}" for model_file in model_files}
        for node in chosen:
            for parent_id in node.depends_on.nodes:
                parent = self.manifest.nodes.get(parent_id)
                if parent is not None and "staging" in parent.fqn:
                    paths.add(f"+path:{parent.original_file_path}")
        models = sorted(_relation_name(n) for n in chosen if _relation_name(n) in partitioned)
        return Selection(" ".join(sorted(paths)), models, given=select, model_files=model_files)

    def _with_descendants(self, unique_ids: set[str]) -> set[str]:
        """`unique_ids` and every node downstream of any of them, through the graph's edges."""
        children: dict[str, set[str]] = {}
        for node in self.manifest.nodes.values():
            for parent in getattr(node.depends_on, "nodes", ()):  # a seed's names macros
                children.setdefault(parent, set()).add(node.unique_id)
        found, todo = set(unique_ids), list(unique_ids)
        while todo:
            for child in children.get(todo.pop(), ()):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        return found

    def code_versions(self) -> dict[str, str]:
        """The current code version of every partitioned model, as dbt computes it
        (refill_code_version): one compile of an inline expression, not one per model.

        The answer is kept, in memory and in the target folder, under a key of everything
        the macro reads (the adapter, the graph's checksums and edges, the seeds' content
        keys, the project's macros, dbt_project.yml for code_epoch): a command on an
        unchanged project reads it instead of compiling. The seeds are read again on every
        call, so a process that parsed the project before a seed changed (a worker's)
        sees the change."""
        nodes = self.partitioned_models()
        seed_contents = self.seed_contents()
        key = self._code_version_key(nodes, seed_contents)
        if self._code_versions is not None and self._code_versions[0] == key:
            return self._code_versions[1]
        cache = self.target_dir() / CODE_VERSIONS_FILE
        versions = _read_cached(cache, key)
        if versions is None:
            versions = self._compile_code_versions(nodes, seed_contents)
            _write_cached(cache, key, versions)
        self._code_versions = (key, versions)
        return versions

    def _compile_code_versions(
        self, nodes: dict[str, object], seed_contents: dict[str, str]
    ) -> dict[str, str]:
        # the contents as a Jinja dict literal: unique ids from the manifest, hex digests
        contents = json.dumps(seed_contents, sort_keys=True)
        expression = "|".join(
            f"{name}={{{{ refill_code_version('{node.unique_id}', {contents}) }}}}"
            for name, node in sorted(nodes.items())
        )
        # --no-populate-cache: the versions come from the graph; the warehouse is not
        # opened, so a run computing them is not refused while another process writes.
        result = self.invoke(["compile", "--inline", expression, "--no-populate-cache"])
        if not result.success:
            # dbt leaves a failed inline node in the manifest; drop it, or every later
            # inline compile in this process is refused as a duplicate.
            for unique_id in [n for n in self.manifest.nodes if n.startswith("sql_operation.")]:
                del self.manifest.nodes[unique_id]
            raise DbtError(f"dbt could not compute code versions: {outcome_of(result).message}")
        compiled = result.result.results[0].node.compiled_code.strip()
        return dict(pair.split("=", 1) for pair in compiled.split("|"))

    def _code_version_key(self, nodes: dict[str, object], seed_contents: dict[str, str]) -> str:
        graph = sorted(
            (unique_id, node.checksum.checksum, sorted(getattr(node.depends_on, "nodes", [])))
            for unique_id, node in self.manifest.nodes.items()
            if not unique_id.startswith("sql_operation.")
        )
        return _fingerprint(
            # the engine's: dispatched macros give each adapter its own versions, and one
            # project folder serves both targets (DBT_TARGET)
            self.adapter_type,
            graph,
            seed_contents,
            sorted(nodes),
            self._project_macros(),
            (self.project_dir / "dbt_project.yml").read_text(),
        )

    def _project_macros(self) -> list[tuple[str, str]]:
        name = self.manifest.metadata.project_name
        return sorted(
            (unique_id, macro.macro_sql)
            for unique_id, macro in self.manifest.macros.items()
            if macro.package_name == name
        )

    def target_dir(self) -> Path:
        """dbt's target folder: DBT_TARGET_PATH, else `target` (dbt_project.yml's target-path)."""
        return self.project_dir / os.environ.get("DBT_TARGET_PATH", "target")

    def seeds(self) -> dict[str, tuple[str, str]]:
        """Every seed of the project: unique id -> (schema, table)."""
        return {
            unique_id: (node.schema, _relation_name(node))
            for unique_id, node in self.manifest.nodes.items()
            if node.resource_type == "seed"
        }

    def seed_contents(self) -> dict[str, str]:
        """Every seed's content key, read from its file now: seed id -> sha256 of its bytes
        (refill.code_version.content_sha256), whatever its size. dbt's checksum of a seed
        over 1 MiB is its path, which no changed rate changes."""
        return {
            unique_id: content_sha256(seed_file(node))
            for unique_id, node in self.manifest.nodes.items()
            if node.resource_type == "seed"
        }

    def seed_load_key(self) -> str:
        """What a `dbt seed` loads and creates: the seed files' contents and their config,
        and the on-run-start DDL with the macros it calls. Equal keys, equal warehouse
        effect."""
        nodes = self.manifest.nodes.values()
        contents = self.seed_contents()
        seeds = sorted(
            (n.unique_id, contents[n.unique_id], n.relation_name, n.config.to_dict())
            for n in nodes
            if n.resource_type == "seed"
        )
        hooks = sorted((n.unique_id, n.raw_code) for n in nodes if n.resource_type == "operation")
        return _fingerprint(seeds, hooks, self._project_macros())


@dataclass(frozen=True)
class Selection:
    """A dbt --select string (None: the whole project) and the partitioned models it writes;
    `given`: the selection as the user typed it (None: none); `model_files`: the files of
    every model it builds, whose audits' twins a build leaves out (none for a selection
    made by hand: no twin is left out)."""

    select: str | None
    models: list[str]
    given: str | None = None
    model_files: tuple[str, ...] = ()


@functools.lru_cache(maxsize=1)
def shared_project() -> DbtProject:
    """The process's DbtProject: parsed once, reused by every flow run and chunk."""
    return DbtProject()


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


CODE_VERSIONS_FILE = "refill_code_versions.json"


def _fingerprint(*parts) -> str:
    from dbt.version import __version__ as dbt_version

    text = json.dumps([dbt_version, *parts], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _read_cached(path: Path, key: str) -> dict[str, str] | None:
    try:
        cached = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return cached.get("versions") if cached.get("key") == key else None


def _write_cached(path: Path, key: str, versions: dict[str, str]) -> None:
    """Write atomically: a concurrent command reads the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps({"key": key, "versions": versions}, sort_keys=True))
    os.replace(partial, path)


def audits_twins(nodes: dict) -> dict[str, str]:
    """DbtProject.audits_twins over a manifest's nodes (unique id -> node)."""
    twins = {}
    for node in nodes.values():
        audit = (
            (node.config.meta or {}).get("repeats_audit") if node.resource_type == "test" else None
        )
        model = nodes.get(getattr(node, "attached_node", None) or "")
        if not audit or model is None or model.config.get("materialized") != "partitioned":
            continue
        if any(f"{audit}(" in hook.sql for hook in model.config.post_hook):
            twins[node.name] = model.original_file_path
    return twins


def _relation_name(node) -> str:
    """The table a model writes (a versioned model writes <name>_v<version>)."""
    return node.alias or node.name
