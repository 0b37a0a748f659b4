"""The big-day measurement (bench/big_day.py): it lands one day of about the lines asked
for, in two part files, measures the commands on it and removes the landing unless kept.
Its figures are not checked (they need a quiet machine: docs/performance.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_big_day_lands_one_day_measures_it_and_cleans_up(tmp_path: Path):
    # GIVEN an output folder and a small "big" day
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}
    for variable in ("REFILL_LANDING", "REFILL_WAREHOUSE", "PREFECT_API_URL", "DBT_TARGET_PATH"):
        env.pop(variable, None)
    # WHEN the plain microbatch of it is measured
    completed = subprocess.run(
        [sys.executable, "-m", "bench.big_day", "500", "--only", "e", "--out", str(tmp_path)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    # THEN one day of about 500 lines in two part files was landed and measured
    (result_path,) = tmp_path.glob("big-day-*.json")
    results = json.loads(result_path.read_text())
    assert 450 <= results["lines"] <= 550
    (run,) = results["runs"]
    assert run["contender"] == "e" and run["returncode"] == 0 and run["peak_rss_bytes"] > 0
    assert run["published"]["rows"] > 0
    assert "peak" in completed.stdout
    # AND the landing is gone
    assert not (tmp_path / "landing").exists()
