"""The deliberately broken variants, switchable only inside the harness.

Each one models a pipeline without one of refill's guarantees (see
macros/faults/refill_broken_variant.sql). They are reached only through
`DbtProject.extra_vars` of a process the harness controls: its own, or a child it
starts (harness/child.py); no command-line option or environment variable of refill
turns them on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from flows.dbt_runner import DbtProject, shared_project

VARIANT_VAR = "refill_broken_variant"

VARIANTS = {
    "append": "append instead of replace: the window's delete is skipped",
    "clock_date": "the partition date taken from the run's clock, not the logical date",
    "split_transaction": "the delete committed before the insert, in separate transactions",
}


def check_variant(name: str | None) -> str | None:
    if name is not None and name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; one of {', '.join(VARIANTS)}")
    return name


def apply_variant(name: str | None, project: DbtProject | None = None) -> None:
    """Switch this process's dbt builds to the variant (None: the real code)."""
    project = project or shared_project()
    project.extra_vars.pop(VARIANT_VAR, None)
    if check_variant(name):
        project.extra_vars[VARIANT_VAR] = name


@contextlib.contextmanager
def variant(name: str | None) -> Iterator[None]:
    """The variant for the duration of the block, then the real code again."""
    apply_variant(name)
    try:
        yield
    finally:
        apply_variant(None)
