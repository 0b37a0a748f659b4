"""What a dbt invocation's result says: whether it failed, where (the failed step), of which
class, whether a retry can help, and the one line that says what to do (the rules:
refill/rules/failures.py). Read by refill.warehouse.dbt_runner for every build and operation."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from refill.errors import FailedStep
from refill.rules.failures import WHAT_TO_DO, classify_failure


@dataclass
class BuildOutcome:
    """What one `dbt build` of a window did, and when it failed, where and whether a retry
    can help (see `classify_failure`)."""

    success: bool
    message: str  # the first error on one line, or "ok"
    statuses: dict[str, str] = field(default_factory=dict)  # unique id -> success/error/...
    failed_step: FailedStep | None = None
    failure_class: str | None = None  # a key of WHAT_TO_DO
    transient: bool = False

    @property
    def what_to_do(self) -> str:
        return WHAT_TO_DO.get(self.failure_class or "", WHAT_TO_DO["other"])


def outcome_of(result) -> BuildOutcome:
    if result.exception is not None:
        message = one_line(result.exception)
        step, failure_class, transient = classify_failure(str(result.exception), None, None)
        return BuildOutcome(False, message, {}, step, failure_class, transient)
    statuses: dict[str, str] = {}
    first_error = None
    for node_result in getattr(result.result, "results", []) or []:
        status = str(node_result.status)
        statuses[node_result.node.unique_id] = status
        if first_error is None and status in ("error", "fail", "runtime error"):
            first_error = node_result
    if result.success:
        return BuildOutcome(True, "ok", statuses)
    if first_error is None:
        first_error = _skipped_for_an_ephemeral_error(result)
    if first_error is None:
        return BuildOutcome(
            False,
            "dbt failed without a node error (see dbt's log)",
            statuses,
            FailedStep.OTHER,
            "other",
            False,
        )
    node = first_error.node
    raw = str(first_error.message or "")
    step, failure_class, transient = classify_failure(raw, node.resource_type, node.name)
    message = f"{node.name}: {one_line(raw)}"
    return BuildOutcome(False, message, statuses, step, failure_class, transient)


_EPHEMERAL_CAUSE = re.compile(r"caused by compilation error in referenced ephemeral model (\S+)")


@dataclass
class _NodeError:
    node: object
    message: str


def _skipped_for_an_ephemeral_error(result) -> _NodeError | None:
    """The node skipped because an ephemeral model it reads failed to compile, with that
    model's own error (DbtProject.invoke keeps it: node_errors), or None."""
    errors = getattr(result, "node_errors", {}) or {}
    for node_result in getattr(result.result, "results", []) or []:
        cause = _EPHEMERAL_CAUSE.search(str(node_result.message or ""))
        if str(node_result.status) == "skipped" and cause and errors.get(cause.group(1)):
            return _NodeError(node_result.node, errors[cause.group(1)])
    return None


def one_line(error) -> str:
    text = " ".join(str(error).split())
    text = text.split(" > in macro ")[0].split(" > called by ")[0]
    for prefix in ("Compilation Error in", "Runtime Error in"):
        if prefix in text and ")" in text:
            # dbt's frame ("Compilation Error in model x (path)") before the message itself
            text = text.split(")", 1)[1].strip() or text
    return text
