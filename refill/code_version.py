"""The git commit a run was made from, recorded in the ledger for the audit trail.

The code version that decides staleness is dbt's: `refill_code_version()` in
`macros/ops/refill_code_version.sql` hashes a model's checksum with those of
everything upstream of it (models and seeds). The flows ask dbt for it rather
than computing it a second time.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from refill import settings

UNKNOWN_COMMIT = "unknown"


def git_commit(project_dir: Path | None = None) -> str:
    """The commit checked out in `project_dir` (default: the project), `+dirty` when tracked
    files differ."""
    return _git_commit(project_dir or settings.project_dir())


@functools.lru_cache(maxsize=8)
def _git_commit(project_dir: Path) -> str:
    try:
        head = _git(project_dir, "rev-parse", "--short=12", "HEAD")
        dirty = _git(project_dir, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return UNKNOWN_COMMIT
    return f"{head}+dirty" if dirty else head


def _git(project_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=project_dir, check=True, capture_output=True, text=True, timeout=10
    ).stdout.strip()
