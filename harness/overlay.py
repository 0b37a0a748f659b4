"""Patched copies of the dbt project: the armed fault seam and the broken variants.

The product ships an inert seam, `refill_fault_point(point)`, that renders nothing and
reads nothing, and no switch that breaks a guarantee. The harness gets both another way:
it copies what dbt needs of the project to a temporary folder and replaces named files
there with its own (harness/overlays/<layer>/, the same relative paths):

- `armed` (every copy): macros/faults/refill_fault_point.sql, a seam that renders
  `select error(...)` when the env var REFILL_HARNESS_FAULT names the point (see
  `fault_spec`). Only the copy reads that variable.
- `audits_off` (every broken variant): the fact model's in-transaction audits return
  nothing, so the harness's invariants, not the audits, must catch the breakage (the
  fault seam stays in them).
- `<variant>` (harness/variants.py): the breakage itself.

A caller runs refill or dbt on a copy with `REFILL_PROJECT_DIR=<copy>` (refill.settings
reads it) or `DbtProject(project_dir=copy)`, and arms a fault with `fault_environment`.
Each replacement file must replace a file the product has, and may define only macros
that file defines: when the product moves a macro, building the copy fails naming it,
rather than the variant silently testing nothing. A replacement replaces the whole file,
the `spark__` versions of its macros too: the broken variants run on DuckDB only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import yaml

from refill import settings

FAULT_ENV = "REFILL_HARNESS_FAULT"
OVERLAYS = Path(__file__).resolve().parent / "overlays"
ARMED = "armed"
AUDITS_OFF = "audits_off"
LAYER_NOTE = "VARIANT.md"  # in each layer: which product files and macros it replaces

# What dbt reads besides the folders dbt_project.yml names (model-paths, macro-paths, ...).
PROJECT_FILES = ("dbt_project.yml", "profiles.yml", "packages.yml", "dependencies.yml")
# Each folder setting of dbt_project.yml and dbt's default for it.
PATH_KEYS = {
    "model-paths": ["models"],
    "macro-paths": ["macros"],
    "seed-paths": ["seeds"],
    "test-paths": ["tests"],
    "snapshot-paths": ["snapshots"],
    "analysis-paths": ["analyses"],
    "docs-paths": [],
}
_MACRO = re.compile(r"{%-?\s*(?:macro|test|materialization)\s+(\w+)\s*[(,]")

_copies: dict[str | None, Path] = {}
_root: Path | None = None


class OverlayError(RuntimeError):
    """An overlay no longer fits the product (a replaced file or macro has moved)."""


def layers(variant: str | None) -> list[str]:
    """The overlay layers a copy applies, in order: the armed seam, then a variant's."""
    if variant is None:
        return [ARMED]
    if not (OVERLAYS / variant).is_dir():
        raise OverlayError(f"no overlay for variant {variant!r} in {OVERLAYS}")
    return [ARMED, AUDITS_OFF, variant]


def replaced_files(variant: str | None, source: Path | None = None) -> dict[str, Path]:
    """Each product file the copy of `source` replaces (relative path) and its replacement.

    A layer's files replace the product files at the same relative paths. A layer whose
    product has moved between versions holds alternatives instead, one folder each
    (`@wap`, `@main`, ...): the first, by name, whose every file replaces a file the
    product has, defining only macros that file defines, is the one applied."""
    source = source or settings.PACKAGE_PROJECT_DIR
    replaced: dict[str, Path] = {}
    for layer in layers(variant):
        alternatives = sorted(p for p in (OVERLAYS / layer).glob("@*") if p.is_dir())
        if not alternatives:
            replaced.update(_layer_files(OVERLAYS / layer))
            continue
        reasons = []
        for folder in reversed(alternatives):  # @wap before @main: the newer product first
            files = _layer_files(folder)
            misfits = [_misfit(source, relative, path) for relative, path in files.items()]
            misfits = [reason for reason in misfits if reason]
            if not misfits:
                replaced.update(files)
                break
            reasons.append(misfits[0])
        else:
            raise OverlayError(f"no alternative of overlay {layer} fits: {'; '.join(reasons)}")
    return replaced


def _layer_files(folder: Path) -> dict[str, Path]:
    return {
        path.relative_to(folder).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and path.name != LAYER_NOTE
        and "@" not in path.relative_to(folder).parts[0]
    }


def patched_project(variant: str | None = None, source: Path | None = None) -> Path:
    """The folder of a patched copy of the dbt project: built once per process and variant.

    `source` defaults to the product project (refill.settings.project_dir() as it is
    without REFILL_PROJECT_DIR pointing at a copy: the package's checkout)."""
    if variant not in _copies:
        copy = _temporary_root() / (variant or ARMED)
        if copy.exists():
            shutil.rmtree(copy)
        build_copy(source or settings.PACKAGE_PROJECT_DIR, copy, variant)
        _copies[variant] = copy
    return _copies[variant]


def build_copy(source: Path, target: Path, variant: str | None = None) -> Path:
    """Copy the project at `source` to `target` (a new folder) and apply the overlays."""
    replaced = replaced_files(variant, source)
    copy_project(source, target)
    for relative, replacement in replaced.items():
        misfit = _misfit(target, relative, replacement)
        if misfit:
            raise OverlayError(misfit)
        shutil.copy2(replacement, target / relative)
    return target


def copy_project(source: Path, target: Path) -> None:
    """Copy what dbt needs of the project: its files and the folders dbt_project.yml
    names; not target/, logs/, .venv/, data/ or the warehouse."""
    config = yaml.safe_load((source / "dbt_project.yml").read_text()) or {}
    folders = {folder for key, default in PATH_KEYS.items() for folder in config.get(key, default)}
    folders.add(config.get("packages-install-path", "dbt_packages"))
    target.mkdir(parents=True)
    for name in PROJECT_FILES:
        if (source / name).is_file():
            shutil.copy2(source / name, target / name)
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in sorted(folders):
        if (source / folder).is_dir():
            shutil.copytree(source / folder, target / folder, ignore=ignore)


def _misfit(project: Path, relative: str, replacement: Path) -> str | None:
    """Why `replacement` cannot replace `relative` in `project` (None: it fits)."""
    product = project / relative
    name = replacement.relative_to(OVERLAYS)
    if not product.is_file():
        return f"overlay {name} replaces {relative}, which the product does not have"
    missing = set(_MACRO.findall(replacement.read_text())) - set(
        _MACRO.findall(product.read_text())
    )
    if missing:
        return f"overlay {name} defines {', '.join(sorted(missing))}, which {relative} does not"
    return None


def _temporary_root() -> Path:
    global _root
    if _root is None:
        _root = Path(tempfile.mkdtemp(prefix="refill-overlay-"))
        atexit.register(shutil.rmtree, _root, ignore_errors=True)
    return _root


def fault_spec(
    point: str,
    window: tuple[date, date] | date | str | None = None,
    attempts: int | None = None,
    model: str | None = None,
) -> str:
    """`<point>[:<model>][@<start>..<end>][#<attempts>]`, what the armed seam reads.

    window: the exact build window (start, end) or one day; attempts: fail only the
    first N attempts of the run at that window; model: only in that model."""
    spec = point + (f":{model}" if model else "")
    if isinstance(window, tuple):
        spec += f"@{window[0]}..{window[1]}"
    elif window is not None:
        spec += f"@{window}..{window}" if isinstance(window, date) else f"@{window}"
    if attempts is not None:
        spec += f"#{attempts}"
    return spec


def fault_environment(
    point: str | None,
    window: tuple[date, date] | date | str | None = None,
    attempts: int | None = None,
    model: str | None = None,
) -> dict[str, str]:
    """The environment that arms the copy's seam ({} for no fault)."""
    if not point:
        return {}
    return {FAULT_ENV: fault_spec(point, window, attempts, model)}


def project_environment(variant: str | None = None) -> dict[str, str]:
    """The environment that points refill (and dbt through it) at the patched copy."""
    return {settings.PROJECT_DIR_ENV: str(patched_project(variant))}


@contextlib.contextmanager
def use_patched_project(variant: str | None = None) -> Iterator[Path]:
    """This process's refill runs use the patched copy for the block: REFILL_PROJECT_DIR
    is set and the process's shared DbtProject is parsed again from the copy."""
    from refill.warehouse import dbt_runner

    copy = patched_project(variant)
    saved = os.environ.get(settings.PROJECT_DIR_ENV)
    os.environ[settings.PROJECT_DIR_ENV] = str(copy)
    _forget_shared_project(dbt_runner)
    try:
        yield copy
    finally:
        if saved is None:
            os.environ.pop(settings.PROJECT_DIR_ENV, None)
        else:
            os.environ[settings.PROJECT_DIR_ENV] = saved
        _forget_shared_project(dbt_runner)


def _forget_shared_project(dbt_runner) -> None:
    clear = getattr(dbt_runner.shared_project, "cache_clear", None)
    if clear is not None:
        clear()
