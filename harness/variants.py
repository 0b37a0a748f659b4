"""The deliberately broken variants: overlays on a temporary copy of the dbt project.

Each one models a pipeline without one of refill's guarantees. It lives in
harness/overlays/<name>/ as replacement files (which product files and macros each
replaces: the VARIANT.md beside them) applied by harness/overlay.py to a copy of the
project, together with `audits_off` (the in-transaction audits check nothing, so the
harness's invariants must catch the variant) and the armed fault seam. Nothing in the
product reaches them: refill runs a variant only when REFILL_PROJECT_DIR names its copy.
"""

from __future__ import annotations

VARIANTS = {
    "append": "append instead of replace: the window's delete is skipped",
    "clock_date": "the partition date taken from the run's clock, not the logical date",
    "split_transaction": "the delete committed before the insert, in separate transactions",
    "separate_commits": "a chunk's models published in separate transactions",
}


def check_variant(name: str | None) -> str | None:
    if name is not None and name not in VARIANTS:
        raise ValueError(f"unknown variant {name!r}; one of {', '.join(VARIANTS)}")
    return name
