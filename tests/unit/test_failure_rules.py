"""The failure rules (refill/rules/failures.py) and dbt's result read by them
(refill/warehouse/dbt_outcomes.py): which step failed, of which class, and whether a retry
after a pause can help. Pure: messages and result shapes as dbt gives them, no dbt run."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from refill.errors import FailedStep
from refill.rules.failures import MESSAGE_CLASS, STEP_OF_CLASS, WHAT_TO_DO, classify_failure
from refill.warehouse.dbt_outcomes import outcome_of


@pytest.mark.parametrize(
    "message, resource_type, node, expected",
    [
        (
            "Compilation Error in model stg_payments__manifests (x.sql) refill readiness: 1 "
            "day(s) of payments not ready, nothing written: 2026-01-02 (no _SUCCESS manifest)",
            "model",
            "stg_payments__manifests",
            (FailedStep.READINESS, "readiness", False),
        ),
        (
            "Runtime Error in model fct_payments (x.sql) Invalid Input Error: refill audit: "
            "fct_payments does not reconcile with stg_payments__lines: 2026-02-01",
            "model",
            "fct_payments",
            (FailedStep.AUDIT, "audit", False),
        ),
        (
            "Got 3 results, configured to fail if != 0",
            "test",
            "unique_fct",
            (FailedStep.AUDIT, "audit", False),
        ),
        (
            "refill publish: the shadow of fct_payments is missing",
            "operation",
            "refill-on-run-end-0",
            (FailedStep.PUBLISH, "publish", False),
        ),
        (
            "Compilation Error in model stg_payments__manifests refill window: end_date "
            "2026-02-01 is before start_date 2026-02-03",
            "model",
            "stg_payments__manifests",
            (FailedStep.BUILD, "window", False),
        ),
        (
            "refill input: a value holds a NUL character",
            "model",
            "stg_payments__lines",
            (FailedStep.BUILD, "input", False),
        ),
        (
            "Compilation Error in model fct_payments 'x' is undefined",
            "model",
            "fct_payments",
            (FailedStep.BUILD, "compile", False),
        ),
        (
            "Invalid Input Error: Invalid unicode (byte sequence mismatch) detected in value",
            "model",
            "stg_payments__lines",
            (FailedStep.BUILD, "other", False),
        ),
        (
            'IO Error: Could not set lock on file "w.duckdb": Conflicting lock is held in '
            "/usr/bin/python (PID 4242)",
            "model",
            "fct_payments",
            (FailedStep.LOCK, "lock", True),
        ),
        (
            "IO Error: Could not read from file w.duckdb: Input/output error",
            "model",
            "fct_payments",
            (FailedStep.BUILD, "io", True),
        ),
        (
            "Runtime Error in model fct_payments [FAILED_READ_FILE.FILE_NOT_EXIST] Error while "
            "reading file file:/w/staging.db/stg_payments__lines/part-00000-1.snappy.parquet. "
            "File does not exist.",
            "model",
            "fct_payments",
            (FailedStep.BUILD, "io", True),
        ),
    ],
    ids=[
        "readiness",
        "audit",
        "data-test",
        "publish",
        "window",
        "input",
        "compile",
        "bad-bytes",
        "reader-holds-file",
        "io-hiccup",
        "spark-file-gone-under-reader",
    ],
)
def test_each_failure_is_classified_by_where_it_happened(message, resource_type, node, expected):
    assert classify_failure(message, resource_type, node) == expected


def test_a_failed_node_of_a_dbt_result_gives_the_step_and_a_one_line_message():
    failed = SimpleNamespace(
        status="error",
        message="Runtime Error in model fct_payments (m.sql)\n  Invalid Input Error: "
        "refill audit: fct_payments loses landed lines: 2026-02-01",
        node=SimpleNamespace(unique_id="model.refill.fct_payments", name="fct_payments"),
    )
    failed.node.resource_type = "model"
    result = SimpleNamespace(
        success=False, exception=None, result=SimpleNamespace(results=[failed])
    )

    outcome = outcome_of(result)

    assert (outcome.failed_step, outcome.failure_class, outcome.transient) == (
        FailedStep.AUDIT,
        "audit",
        False,
    )
    assert outcome.message.startswith("fct_payments: ") and "\n" not in outcome.message
    assert "2026-02-01" in outcome.message


# The classes the message pattern recognises, read from the pattern itself.
RECOGNISED = MESSAGE_CLASS.pattern.split("(", 1)[1].split(")", 1)[0].split("|")


@pytest.mark.parametrize("failure_class", RECOGNISED)
def test_every_message_class_a_macro_raises_has_its_step_and_its_own_advice(failure_class):
    # a class without its step would fail classification; one without its advice would be
    # told the catch-all "see logs/dbt.log"
    message = f"Compilation Error in model m refill {failure_class}: something"
    step, found, transient = classify_failure(message, "model", "m")
    assert (step, found, transient) == (STEP_OF_CLASS[failure_class], failure_class, False)
    assert failure_class in WHAT_TO_DO
