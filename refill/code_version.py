"""The git commit a run was made from, recorded in the ledger for the audit trail, and the
content key of a seed (reference data) file.

The code version that decides staleness is dbt's: `refill_code_version()` in
`macros/ops/refill_code_version.sql` hashes a model's checksum with those of
everything upstream of it (models, and seeds by their content key). The flows ask dbt
for it rather than computing it a second time.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path

from refill import settings

UNKNOWN_COMMIT = "unknown"
_BLOCK_BYTES = 1 << 20


def content_sha256(path: Path) -> str:
    """A seed file's content key: the sha256 of its bytes, whatever its size. dbt's own
    checksum of a seed over 1 MiB is its path, so a changed rate in a large seed kept its
    checksum. The seeds' load hook records the same key of what it
    loaded (refill_record_seed_load, through the dbt plugin's refill_file_sha256)."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(_BLOCK_BYTES):
            digest.update(block)
    return digest.hexdigest()


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
