"""The git commit a run was made from, recorded in the ledger for the audit trail, and the
content key of a seed (reference data) file.

The code version that decides staleness is dbt's: `refill_code_version()` in
`macros/ops/refill_code_version.sql` hashes a model's meaning (its tokens without comments
or layout: `macros/ops/refill_code_form.sql`) with that of everything upstream of it
(models, row rules, and seeds by their content key). The flows ask dbt for it rather than
computing it a second time.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path

from refill import settings
from refill.errors import RefillError

UNKNOWN_COMMIT = "unknown"
_BLOCK_BYTES = 1 << 20


def content_sha256(path: Path) -> str:
    """A seed file's content key: the sha256 of its bytes, whatever its size. dbt's own
    checksum of a seed over 1 MiB is its path, so a changed rate in a large seed kept its
    checksum and left days "current" at the old rate. The seeds' load hook records the same
    key of what it loaded (refill_record_seed_load, through the dbt plugin's refill_file_sha256)."""
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


def resolve_ref(folder: Path, ref: str) -> str:
    """The full commit id a git ref names in the repository holding `folder` (`refill ci
    --base`), or RefillError in one line. The ref is an argument of git's, never shell
    text; a ref starting with "-" would read as an option and is refused."""
    if not ref or ref.startswith("-") or any(ord(char) < 32 for char in ref):
        raise RefillError(f"not a git ref: {ref[:80]!r}")
    try:
        return _git(
            folder, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"
        )
    except subprocess.CalledProcessError:
        raise RefillError(f"{ref[:80]!r} names no commit in the repository at {folder}") from None
    except OSError as error:
        raise RefillError(f"cannot run git to resolve {ref[:80]!r}: {error}") from None


def _git(project_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=project_dir, check=True, capture_output=True, text=True, timeout=10
    ).stdout.strip()
