"""What a failure is, from what dbt said: the failed step, the failure class, whether a
retry after a pause can help, and the one line that says what to do about each class.

Pure: a function of a message and the failed node's type and name. The warehouse layer
(refill/warehouse/dbt_outcomes.py) reads dbt's result and asks these rules.
"""

from __future__ import annotations

import re

from refill.errors import FailedStep

# refill's message classes ("refill <class>: ..."), raised by the project's macros, and the
# step each one names. A window or input refusal stops the build before it writes.
MESSAGE_CLASS = re.compile(
    r"\brefill (readiness|audit|publish|window|input|reference|project|preview):"
)
STEP_OF_CLASS = {
    "readiness": FailedStep.READINESS,
    "audit": FailedStep.AUDIT,
    "publish": FailedStep.PUBLISH,
    "window": FailedStep.BUILD,
    "input": FailedStep.BUILD,
    "reference": FailedStep.BUILD,
    "project": FailedStep.BUILD,
    "preview": FailedStep.PUBLISH,
}
# What DuckDB says when another process holds the file, or the disk stumbled: the only
# failures a retry after a pause can fix. Everything else fails the same way again.
LOCK_MARKERS = ("could not set lock on file", "conflicting lock", "database is locked")
IO_HICCUP_MARKERS = (
    "input/output error",
    "resource temporarily unavailable",
    "stale file handle",
    # Spark: a file listed when the query was planned was gone when it was read (another
    # process replaced the table's files meanwhile): a runtime read, not a project that
    # does not compile, and a rerun reads the files then present.
    "file_not_exist",
    "filenotfoundexception",
)
# The one line after a failure that says what to do, by failure class (docs/guarantees.md).
WHAT_TO_DO = {
    "readiness": "nothing was written; a rerun builds it once the export has landed",
    "audit": "nothing was published; a rerun fails the same way until the landing is "
    "re-exported or the model is fixed",
    "publish": "nothing was published; a rerun fails the same way until the cause in "
    "logs/dbt.log is fixed",
    "window": "nothing was written; fix the window",
    "input": "nothing was written; the landing holds a value refill cannot use: re-export the day",
    # a seed file changed since the warehouse loaded it (refill's commands load it first)
    "reference": "nothing was written; load the seeds (`dbt seed`) or rerun the refill command, "
    "which loads them",
    "compile": "nothing was written; the dbt project does not compile: fix it (`dbt compile`)",
    # a partitioned model without its audits or ledger post-hooks (refused before any write;
    # `dbt compile` runs no hooks, so it would not show the refusal)
    "project": "nothing was written; fix the partitioned model named above and rerun",
    # a publish from a preview refused (something it depends on changed) or misused
    "preview": "run the preview again: a publish of it publishes only what it kept, unchanged",
    "lock": "nothing was written; the warehouse stayed busy: rerun the same command to "
    "resume, or give a longer --lock-wait",
    "io": "nothing was published; an I/O error: rerun the same command to resume",
    "other": "nothing was published; see logs/dbt.log",
}


def classify_failure(message: str, resource_type: str | None, node_name: str | None) -> tuple:
    """(failed step, failure class, transient) of a failed dbt node or invocation.

    The structured signals first: the message class a project macro raised (`refill audit:`),
    then which node failed (the manifests model is readiness, a data test is an audit, a
    run hook is publishing); DuckDB's lock and I/O errors are the transient ones.
    """
    lowered = message.lower()
    node_step = (
        FailedStep.AUDIT
        if resource_type == "test"
        else FailedStep.PUBLISH
        if resource_type == "operation"
        else FailedStep.READINESS
        if node_name and node_name.endswith("__manifests")
        else FailedStep.BUILD
        if resource_type in ("model", "seed", "snapshot")
        else FailedStep.OTHER
    )
    if any(marker in lowered for marker in LOCK_MARKERS):
        return FailedStep.LOCK, "lock", True
    if any(marker in lowered for marker in IO_HICCUP_MARKERS):
        return node_step, "io", True
    found = MESSAGE_CLASS.search(message)
    if found:
        return STEP_OF_CLASS[found.group(1)], found.group(1), False
    if resource_type == "test":
        return FailedStep.AUDIT, "audit", False
    if "compilation error" in lowered or "parsing error" in lowered:
        return node_step, "compile", False
    return node_step, "other", False
