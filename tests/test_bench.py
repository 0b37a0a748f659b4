"""The benchmark's quick mode: every contender runs on tiny data and the outputs are written.

It checks that the bench runs, not its figures (those need the full data and a quiet
machine: docs/performance.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import report

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_quick_bench_runs_every_contender_and_writes_its_outputs(tmp_path: Path):
    # GIVEN an empty output folder
    out = tmp_path / "bench-out"
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}
    for variable in ("REFILL_LANDING", "REFILL_WAREHOUSE", "PREFECT_API_URL", "DBT_TARGET_PATH"):
        env.pop(variable, None)

    # WHEN the quick benchmark runs
    finished = subprocess.run(
        [sys.executable, "-m", "bench.run", "--quick", "--out", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )

    # THEN it succeeds, and writes the JSON, the table and the chart
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    results = json.loads((out / "bench-results.json").read_text())
    table = (out / "bench-results.md").read_text()
    chart = (out / "bench-scaling.png").read_bytes()
    assert chart.startswith(b"\x89PNG")

    # every contender ran and was measured
    summary = results["summary"]
    assert set(summary["contenders"]) == {"a", "b", "c", "d"}
    for figures in summary["contenders"].values():
        assert figures["wall_seconds"] > 0 and figures["peak_rss_bytes"] > 0
    assert set(summary["ratios"]) == {"a/b", "a/c", "d/a"}
    assert [entry["days"] for entry in summary["scaling"]] == [2, 5]
    assert sorted(summary["rerun"], key=int) == ["2", "5"]
    assert {target["name"] for target in summary["targets"]} and all(
        target["met"] is not None for target in summary["targets"]
    )
    # the contenders did the same work: same payments, amounts and quarantine
    assert summary["same_result"] is True
    for contender in ("(a) refill", "(b) dbt microbatch", "(c) floor", "(d) naive"):
        assert contender in table


def test_publish_replaces_only_the_results_block(tmp_path: Path):
    # GIVEN a results folder and a performance page with a results block
    out, docs = tmp_path / "out", tmp_path / "docs"
    out.mkdir()
    docs.mkdir()
    (out / "bench-results.json").write_text("{}")
    (out / "bench-scaling.png").write_bytes(b"\x89PNG")
    page = docs / "performance.md"
    page.write_text(f"intro\n{report.PUBLISH_START}\nold table\n{report.PUBLISH_END}\nfindings\n")

    # WHEN the results are published
    report.publish(out, docs, "new table\n")

    # THEN the block holds the new table and the text around it stands
    assert page.read_text() == (
        f"intro\n{report.PUBLISH_START}\nnew table\n{report.PUBLISH_END}\nfindings\n"
    )
    assert (docs / "bench-latest.json").read_text() == "{}"
    assert (docs / "bench-scaling.png").exists()
