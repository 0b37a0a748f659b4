"""The fault-injection harness: the real code passes the CI budget, each broken variant is
caught within it, and a killed run converges (see docs/harness.md)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import date, timedelta

import pytest

from flows import locking
from flows.cli import main
from flows.sample_data import DaySpec, write_days
from harness.run import DEFAULT_SCENARIOS, DEFAULT_SEED, run_harness
from harness.scenarios import plan_scenario
from harness.variants import VARIANTS
from tests.helpers import query, snapshot

pytestmark = pytest.mark.usefixtures("prefect_harness")

# What each variant breaks, and so which invariants may be the first to see it.
EXPECTED_CATCHES = {
    "append": {"unique_transaction_id", "reconciles_at_fingerprint", "lines_accounted"},
    "clock_date": {"rows_on_logical_date", "reconciles_at_fingerprint", "ledger_matches_data"},
    "split_transaction": {
        "reader_sees_whole_publishes",
        "ledger_matches_data",
        "failed_run_changes_nothing",
        "reconciles_at_fingerprint",
        "killed_run_converges",
    },
}
CI_JOBS = 2  # scenarios are independent; one refill run keeps about one core busy


def test_scenarios_are_a_function_of_their_seed():
    first, again = plan_scenario(DEFAULT_SEED), plan_scenario(DEFAULT_SEED)
    assert first.describe() == again.describe()
    assert plan_scenario(DEFAULT_SEED + 1).describe() != first.describe()
    for seed in range(DEFAULT_SEED, DEFAULT_SEED + DEFAULT_SCENARIOS):
        scenario = plan_scenario(seed)
        assert 3 <= len(scenario.days) <= 5
        assert 3 <= len([e for e in scenario.events if e.kind != "resume"]) <= 6


def test_the_real_code_passes_the_ci_budget(tmp_path):
    # GIVEN the CI budget of seeded scenarios, on the real code
    lines: list[str] = []

    # WHEN the harness runs them, checking every invariant after every event
    stats = run_harness(
        DEFAULT_SCENARIOS, DEFAULT_SEED, workdir=tmp_path, say=lines.append, jobs=CI_JOBS
    )
    print("\n".join(lines))

    # THEN nothing is violated, every run that should have succeeded did, and the budget
    # exercised what it claims to
    assert stats.scenarios == DEFAULT_SCENARIOS
    assert [f.lines() for f in stats.violations] == []
    assert [f.lines() for f in stats.liveness] == []
    assert stats.kills >= 3
    assert stats.outcomes["fault"] + stats.outcomes["fault between chunks"] >= 5
    assert stats.reader_polls > 0


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_broken_variant_is_caught_within_the_budget(variant, tmp_path):
    lines: list[str] = []

    stats = run_harness(
        DEFAULT_SCENARIOS,
        DEFAULT_SEED,
        variant=variant,
        stop_on_violation=True,
        workdir=tmp_path,
        say=lines.append,
    )
    print("\n".join(lines))

    assert stats.violations, f"{variant} was not caught in {stats.scenarios} scenarios"
    first = stats.violations[0]
    print(f"{variant}: caught by {first.invariant} at seed {first.seed}: {first.detail}")
    caught = {finding.invariant for finding in stats.violations}
    assert caught & EXPECTED_CATCHES[variant], caught
    # the report names the invariant and the seed that reproduces it
    assert any(f"caught: {first.invariant} at seed {first.seed}" in line for line in lines)
    assert any(f"--seed {first.seed} --variant {variant}" in line for line in lines)


def test_a_killed_backfill_then_the_same_command_converges_to_the_unkilled_warehouse(
    tmp_path, monkeypatch
):
    from prefect.settings import PREFECT_API_URL

    # GIVEN two copies of the same four landed days
    first = date(2025, 6, 1)
    killed, unkilled = tmp_path / "killed", tmp_path / "unkilled"
    write_days(killed / "landing", first, 4, DaySpec(payments=60, malformed_rate=0.05))
    shutil.copytree(killed / "landing", unkilled / "landing")
    argv = ["backfill", "--start", str(first), "--end", str(first + timedelta(days=3))]
    argv += ["--chunk-days", "1", "--order", "oldest-first", "--retries", "1"]
    warehouse = killed / "warehouse" / "refill.duckdb"
    env = {
        **os.environ,
        "PREFECT_API_URL": PREFECT_API_URL.value(),
        "REFILL_LANDING": str(killed / "landing"),
        "REFILL_WAREHOUSE": str(warehouse),
    }

    # WHEN the backfill is SIGKILLed while it builds its second chunk
    process = subprocess.Popen(
        [sys.executable, "-m", "flows", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and process.poll() is None:
            holder = locking.read_holder(warehouse)
            if holder and holder.partitions == [str(first + timedelta(days=1))]:
                time.sleep(0.3)
                break
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL
    published = query(
        warehouse,
        "select count(*) from ops.partition_ledger where model_name = ?",
        ["fct_payments"],
    )
    assert 0 < published[0][0] < 4  # it died half way

    # AND the same command runs again
    again = subprocess.run([sys.executable, "-m", "flows", *argv], env=env, capture_output=True)
    assert again.returncode == 0, again.stderr.decode()[-2000:]

    # THEN the warehouse is the one an unkilled run of the command builds
    monkeypatch.setenv("REFILL_LANDING", str(unkilled / "landing"))
    monkeypatch.setenv("REFILL_WAREHOUSE", str(unkilled / "warehouse" / "refill.duckdb"))
    assert main([*argv, "--retry-delay", "0"]) == 0
    assert snapshot(warehouse) == snapshot(unkilled / "warehouse" / "refill.duckdb")
