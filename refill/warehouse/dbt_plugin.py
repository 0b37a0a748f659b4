"""dbt-duckdb plugin: lets dbt call refill's Python rules as SQL functions.

Registered in `profiles.yml`. It is the bridge that keeps one home per rule:
the readiness verdict (`refill.rules.readiness`), the landing location
(`refill.settings`), the git commit and a seed file's content key (`refill.code_version`)
and whether a preview's chunk may be published now (`refill.rules.preview.what_changed`)
are Python, and dbt macros read them through these functions instead of re-implementing
them.
"""

from __future__ import annotations

import contextlib
import json
from datetime import date
from pathlib import Path

import duckdb
from dbt.adapters.duckdb.plugins import BasePlugin
from duckdb import DuckDBPyConnection

from refill import settings
from refill.code_version import content_sha256, git_commit
from refill.errors import RefillError
from refill.rules import landed_files, readiness, reference
from refill.warehouse import preview_store


def refill_landing_root() -> str:
    """The landing root, refused when the engine could not read it as one literal folder."""
    root = settings.landing_root()
    problem = readiness.landing_root_problem(root)
    if problem:
        shown = json.dumps(root.as_posix(), ensure_ascii=True)
        raise ValueError(f"refill input: REFILL_LANDING {shown} {problem}; use a plain folder path")
    return root.as_posix()


def refill_window_readiness(dataset: str, start: date, end: date) -> str:
    """The window's verdicts as JSON: SQL reads them as data (from_json), never as text."""
    verdicts = readiness.window_readiness(settings.landing_root(), dataset, start, end)
    return json.dumps([v.to_json() for v in verdicts])


def refill_landed_days(dataset: str) -> str:
    days = readiness.landed_days(settings.landing_root(), dataset)
    return json.dumps([d.isoformat() for d in days])


def refill_hold_part_files(part_files: list[str]) -> list[dict]:
    """For each part file (relative to the landing root): the path the engine reads it from,
    a descriptor on the very file this process's readiness verdict read (so a swap of the
    landing's path afterwards, for a link, a FIFO or another file, changes nothing read), and
    the line ending the line reader streams it by ("\n" or "\r\n"), or null: read whole
    by the exact rule (refill_read_landed_lines). A part file that stopped being the file its
    verdict judged stops the build, naming it. refill_release_part_files ends the hold."""
    root = settings.landing_root()
    held = []
    try:
        for part in part_files:
            engine_path, line_ending = readiness.hold_part(root, part)
            held.append({"part": part, "path": engine_path, "line_ending": line_ending})
    except readiness.LandedFileProblem as refused:
        # what this call held is closed by on-run-end's release, with every other node's:
        # closing it here would close another thread's file under its read
        raise ValueError(f"refill readiness: {refused}; nothing written") from None
    return held


def refill_release_part_files() -> str:
    """'' once every descriptor refill_hold_part_files opened is closed; refused (one line,
    naming them) when a file held was written to while the engine read it: the build then
    publishes nothing (on-run-end, before the publish)."""
    problems = landed_files.release_held()
    if problems:
        raise ValueError(
            f"refill readiness: {'; '.join(problems)}; nothing published. Build the window again"
        )
    return ""


def refill_git_commit() -> str:
    return git_commit()


def refill_file_sha256(path: str) -> str:
    """The content key of a seed file (refill.code_version.content_sha256), for the seeds'
    load hook: the key of what was loaded, in the load's transaction."""
    return content_sha256(Path(path))


def refill_window_reference(declared: str, loaded: str, start: date, end: date) -> str:
    """Each day's reference fingerprint (refill.rules.reference) as JSON, for the dataset
    `declared` describes (refill_dataset_reference: its reads as written, the seeds' ids
    and files), from the seed files' bytes: refused, in one line, when a file is not the
    one the warehouse loaded (`loaded`: seed id -> the sha256 ops.seed_loads recorded)."""
    dataset = json.loads(declared)
    try:
        reads = reference.parse_reads(dataset["reads"], dataset["seeds"], dataset["model"])
        fingerprints, _ = reference.window_fingerprints(reads, start, end, json.loads(loaded))
    except (RefillError, OSError) as refused:
        raise ValueError(f"refill reference: {dataset['dataset']}: {refused}") from None
    return json.dumps(
        [{"day": day.isoformat(), "reference_fingerprint": fp} for day, fp in fingerprints.items()]
    )


def refill_preview_refusal(facts: str, start: date, end: date) -> str:
    """'' when chunk start..end of a preview may be published now, else the one line why
    (refill_publish_preview asks it before it writes; `facts`: what it read of the preview,
    the ledger and the project, as JSON)."""
    return preview_store.refusal_now(facts, start, end)


_FUNCTIONS = {
    "refill_landing_root": (refill_landing_root, [], "VARCHAR"),
    "refill_window_readiness": (refill_window_readiness, ["VARCHAR", "DATE", "DATE"], "VARCHAR"),
    "refill_landed_days": (refill_landed_days, ["VARCHAR"], "VARCHAR"),
    "refill_git_commit": (refill_git_commit, [], "VARCHAR"),
    "refill_file_sha256": (refill_file_sha256, ["VARCHAR"], "VARCHAR"),
    "refill_window_reference": (
        refill_window_reference,
        ["VARCHAR", "VARCHAR", "DATE", "DATE"],
        "VARCHAR",
    ),
    "refill_preview_refusal": (refill_preview_refusal, ["VARCHAR", "DATE", "DATE"], "VARCHAR"),
    "refill_hold_part_files": (
        refill_hold_part_files,
        ["VARCHAR[]"],
        "STRUCT(part VARCHAR, path VARCHAR, line_ending VARCHAR)[]",
    ),
    "refill_release_part_files": (refill_release_part_files, [], "VARCHAR"),
}


def register_functions(conn: DuckDBPyConnection) -> None:
    """Register refill's functions on a DuckDB connection (dbt's, or a flow's own)."""
    for name, (function, parameters, return_type) in _FUNCTIONS.items():
        with contextlib.suppress(Exception):  # not registered yet on this connection
            conn.remove_function(name)
        # side_effects: the landing changes between calls; DuckDB must not cache a verdict.
        # Already there when an earlier connection of this process registered it on the same
        # database and another open connection kept that database alive: same function.
        with contextlib.suppress(duckdb.CatalogException):
            conn.create_function(name, function, parameters, return_type, side_effects=True)


def limit_memory(conn: DuckDBPyConnection, profile_setting: str | None = None) -> None:
    """DuckDB's memory budget (settings.duckdb_memory_limit; `profile_setting`: the plugin's
    `memory_limit` in profiles.yml): a big day spills past it, not grows."""
    try:
        limit = settings.duckdb_memory_limit(profile_setting)
    except RefillError as refused:
        raise ValueError(f"refill settings: {refused}") from None
    if limit is not None:
        conn.execute("set memory_limit = ?", [limit])


class Plugin(BasePlugin):
    def initialize(self, plugin_config: dict) -> None:
        # the profile's setting (profiles.yml: the plugin's `config: {memory_limit: ...}`)
        self.memory_limit = plugin_config.get("memory_limit")

    def configure_connection(self, conn: DuckDBPyConnection) -> None:
        register_functions(conn)
        limit_memory(conn, self.memory_limit)
