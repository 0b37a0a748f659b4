"""What a landed file must be before refill reads it: a regular file inside the landing.

The readiness rule (refill/rules/readiness.py) reads two kinds of file, a day's `_SUCCESS`
manifest and its part files, and the line reader reads the part files again. A symbolic
link there reads whatever it points at (`/proc/self/environ`, with the webhook token in it,
once landed in the example's quarantine `line_text`: the symlinked part file); a FIFO, a socket or a
device blocks or reads what is not a file; a second hard link is the same bytes under another
name, perhaps outside the landing. So each file is judged by `lstat` (never following a
link), opened with O_NOFOLLOW, and checked, on the open descriptor, to be the file judged.
The day's folder and its dataset's must be folders, not links.

The engine reads a part file through a descriptor refill opened and checked, never through
its path: `hold_for_reading` opens the very file the readiness verdict of this process
judged (same inode, size and times) and gives the engine `/proc/self/fd/<n>`, which names
that open file whatever the path names by then (a link, a FIFO, another file swapped in).
`release_held` closes them after the build and refuses a file changed in place while held
(grown, truncated or rewritten: its size or times moved), before anything is published.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from pathlib import Path

MANIFEST_NAME = "_SUCCESS"


class LandedFileProblem(ValueError):
    """A landed file is not one refill may read; the message names it, on one line."""


def landed_file_problem(name: str, mode: int, links: int) -> str | None:
    """Why a landed file (`name`: `_SUCCESS` or a part file's) with this `lstat` mode and link
    count may not be read, or None. The one rule: a regular file with one link. A symbolic
    link reads whatever it points at (`/proc/self/environ`, another landing); a FIFO, a socket
    or a device blocks or reads what is not a file; a second hard link means the same bytes
    have another name, perhaps outside the landing (st_nlink is the portable signal)."""
    what = "the manifest" if name == MANIFEST_NAME else "a part file"
    label = MANIFEST_NAME if name == MANIFEST_NAME else f"part file {name}"
    if stat.S_ISREG(mode) and links == 1:
        return None
    kind = (
        "a symbolic link"
        if stat.S_ISLNK(mode)
        else "a folder"
        if stat.S_ISDIR(mode)
        else "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else f"hard-linked ({links} links)"
        if stat.S_ISREG(mode)
        else "not a regular file"
    )
    return f"{label} is {kind}; {what} must be a regular file inside the landing"


def lstat_problem(path: Path) -> str | None:
    """landed_file_problem of the file at `path` as lstat sees it (or why it cannot be)."""
    try:
        facts = path.lstat()
    except OSError as error:
        return unreadable(path, error)
    return landed_file_problem(path.name, facts.st_mode, facts.st_nlink)


def _label(path: Path) -> str:
    return MANIFEST_NAME if path.name == MANIFEST_NAME else f"part file {path.name}"


def unreadable(path: Path, error: OSError) -> str:
    """The one-line reason for a landed file the system would not let refill read."""
    return f"{_label(path)} cannot be read: {error.strerror or type(error).__name__}"


def folder_problem(folder: Path) -> str | None:
    """Why a day's folder (or its dataset's, the folder above it) is not a folder of the
    landing, if it is not: a symbolic link there makes every file under it one from
    elsewhere. Their names are the dataset's and `dt=<day>`, the project's own text."""
    for path in (folder.parent, folder):
        try:
            facts = path.lstat()
        except FileNotFoundError:
            return "no landing folder"
        except OSError as error:
            return f"{path.name} cannot be read: {error.strerror or type(error).__name__}"
        if stat.S_ISLNK(facts.st_mode):
            return f"{path.name} is a symbolic link; a landing folder must be a folder"
        if not stat.S_ISDIR(facts.st_mode):
            return "no landing folder"
    return None


@contextlib.contextmanager
def open_landed_file(path: Path, judged: tuple):
    """The landed file judged by lstat (`judged`: its _identity), opened for reading without
    following a symbolic link and checked to be that very file, still regular with one
    link: a file swapped after its check is refused, never read, and one written to while
    it is read is refused after. O_NONBLOCK: a FIFO swapped in is refused, not waited on."""
    descriptor = _open_checked(path, judged, "changed while it was checked")
    with os.fdopen(descriptor, "rb") as stream:
        yield stream
        # written to while it was read (same inode, other size or times): the bytes read
        # are not one version of the file
        if _identity(os.fstat(descriptor)) != judged:
            raise LandedFileProblem(f"{_label(path)} changed while it was checked")


def _identity(facts: os.stat_result) -> tuple:
    """What tells one version of a file from another: its inode, size and times."""
    return (facts.st_ino, facts.st_size, facts.st_mtime_ns, facts.st_ctime_ns)


def judged_identity(path: Path) -> tuple:
    """The file's identity once lstat says it may be read (else LandedFileProblem)."""
    facts = path.lstat()
    problem = landed_file_problem(path.name, facts.st_mode, facts.st_nlink)
    if problem:
        raise LandedFileProblem(problem)
    return _identity(facts)


def read_landed_file(path: Path) -> bytes:
    """The whole file (the manifest), judged first and opened as open_landed_file does."""
    with open_landed_file(path, judged_identity(path)) as stream:
        return stream.read()


# -- the descriptors the engine reads through --------------------------------------------
# Process state, because the engine (DuckDB, in dbt's process) reads in the same process as
# the readiness verdict: what each part file's last verdict judged, and the descriptors
# held for the engine until the build's end. A lock: dbt runs nodes on threads.
_JUDGED: dict[str, tuple[tuple, object]] = {}
_HELD: dict[str, tuple[int, tuple]] = {}
_LOCK = threading.Lock()


def record_judged(path: Path, identity: tuple, learned: object) -> None:
    """Remember that this process's readiness verdict read the part file at `path` as the
    file of `identity` (its bytes hashed and counted through a descriptor on it), and what
    it `learned` of those bytes (the readiness rule's summary), for the reader."""
    with _LOCK:
        _JUDGED[os.fspath(path)] = (identity, learned)


def hold_for_reading(path: Path) -> tuple[str, object]:
    """A path the engine opens to read the part file that this process's readiness verdict
    judged, and what that verdict learned of it (record_judged). The file is opened without
    following a link and without blocking (a FIFO is refused, never waited on), then checked,
    on the descriptor, to be a regular file with one link and the very file the verdict
    read. The descriptor stays open until release_held: `/proc/self/fd/<n>` names that open
    file, so a swap of the path afterwards changes nothing the engine reads. Raises
    LandedFileProblem."""
    key = os.fspath(path)
    with _LOCK:
        if key not in _JUDGED:
            raise LandedFileProblem(f"{_label(path)} has no readiness verdict in this build")
        judged, learned = _JUDGED[key]
        held = _HELD.get(key)
        if held is not None and held[1] == judged and _identity(os.fstat(held[0])) == judged:
            return _engine_path(held[0]), learned
        if held is not None:
            os.close(_HELD.pop(key)[0])
        try:
            descriptor = _open_checked(path, judged, "changed after its readiness verdict")
        except FileNotFoundError as error:
            raise LandedFileProblem(unreadable(path, error)) from None
        _HELD[key] = (descriptor, judged)
        return _engine_path(descriptor), learned


def release_held() -> list[str]:
    """Close every descriptor held for the engine; the one-line problems of the files that
    changed in place while held (same inode, another size or time: grown, cut or rewritten
    after their verdict), which the build must refuse before it publishes."""
    with _LOCK:
        held = dict(_HELD)
        _HELD.clear()
    problems = []
    for key, (descriptor, judged) in sorted(held.items()):
        try:
            if _identity(os.fstat(descriptor)) != judged:
                problems.append(f"{_label(Path(key))} changed while it was read")
        finally:
            os.close(descriptor)
    return problems


def _open_checked(path: Path, judged: tuple, changed: str) -> int:
    """A descriptor on the file at `path`, opened without following a link and without
    blocking, checked on the descriptor to be a regular file with one link and the file of
    identity `judged` (else LandedFileProblem, saying `changed`). No file: FileNotFoundError
    (the manifest's absence is a verdict of its own)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as error:
        raise LandedFileProblem(lstat_problem(path) or unreadable(path, error)) from None
    facts = os.fstat(descriptor)
    problem = landed_file_problem(path.name, facts.st_mode, facts.st_nlink)
    if problem is None and _identity(facts) != judged:
        problem = f"{_label(path)} {changed}"
    if problem:
        os.close(descriptor)
        raise LandedFileProblem(problem)
    return descriptor


def _engine_path(descriptor: int) -> str:
    """The path by which another reader in this process opens the file the descriptor is
    open on (Linux's /proc; /dev/fd elsewhere)."""
    folder = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    return f"{folder}/{descriptor}"
