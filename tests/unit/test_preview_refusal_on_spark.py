"""What spark__refill_preview_refusal asks the engine's script transformation: one
tab-separated `preview` request row carrying the facts the publish operation read (the
record as Spark's `to_json` gives it: the record body a string, null fields kept, timestamps
without a zone) and the landing root; the answer is the rule's (preview_store.refusal_now),
reading the landing the row names, not the process's REFILL_LANDING (an engine's task runs
elsewhere)."""

from __future__ import annotations

import json
from datetime import date, timedelta

from refill.rules import readiness
from refill.sample_data import DaySpec, write_day, write_days
from refill.warehouse import ops, spark_readiness

D1 = date(2026, 3, 1)
PREVIEW = "p0123456789ab"


def facts(landing, *, expires_in: timedelta = timedelta(days=1)) -> str:
    """A preview of D1..D1+1 as it was kept from `landing` now, as the macro gathers it."""
    fingerprints = {
        f"fct_payments|{verdict.day}": each[0].source_fingerprint
        for verdict, each in readiness.datasets_window_readiness(
            landing, ["payments"], D1, D1 + timedelta(days=1)
        )
    }
    created = ops.utc_now()
    record = {
        "run_id": "preview-run",
        "created_at": created.strftime("%Y-%m-%d %H:%M:%S.%f"),
        "expires_at": (created + expires_in).strftime("%Y-%m-%d %H:%M:%S.%f"),
        "window_start": str(D1),
        "window_end": str(D1 + timedelta(days=1)),
        "select_models": None,
        "record": json.dumps(
            {
                "models": ["fct_payments"],
                "chunks": [[str(D1), str(D1 + timedelta(days=1))]],
                "code_versions": {"fct_payments": "c1"},
                "fingerprints": fingerprints,
                "published": {},
                "references": {},
                "datasets": ["payments"],
            }
        ),
        "report": "{}",
        "preview_id": PREVIEW,
    }
    return json.dumps(
        {
            "preview_id": PREVIEW,
            "record": record,
            "published_chunks": [],
            "published": [],
            "code_versions": {"fct_payments": "c1"},
            "references": {},
        }
    )


def refusal(capsys, facts_json: str, landing) -> str:
    request = ["preview", facts_json, str(D1), str(D1 + timedelta(days=1)), str(landing)]
    assert spark_readiness.main(["\t".join(request) + "\n"]) == 0
    ((key, payload),) = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert key == "refusal"
    return json.loads(payload)["refusal"]


def test_the_engines_preview_request_answers_the_rule_on_the_landing_its_row_names(
    tmp_path, capsys, monkeypatch
):
    landing = tmp_path / "landing"
    write_days(landing, D1, 2, DaySpec(payments=5))
    monkeypatch.setenv("REFILL_LANDING", str(tmp_path / "not-the-landing"))
    kept = facts(landing)

    assert refusal(capsys, kept, landing) == ""
    write_day(landing, D1 + timedelta(days=1), DaySpec(payments=6), seed=3)
    assert refusal(capsys, kept, landing).startswith(
        f"day {D1 + timedelta(days=1)} was re-exported since preview {PREVIEW}"
    )
    expired = facts(landing, expires_in=timedelta(seconds=-1))
    assert refusal(capsys, expired, landing).startswith(f"preview {PREVIEW} expired at")
