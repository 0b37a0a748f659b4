"""The benchmark: its quick mode runs every contender on tiny data and writes its outputs;
the plain microbatch (e) is reconciled against refill; the realistic landing variant.

It checks that the bench runs and what it compares, not its figures (those need the full
data and a quiet machine: docs/performance.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import pytest

from bench import command, contenders, reconcile, report, row_rule
from bench.landing import (
    REALISTIC_MALFORMED_FILES,
    REALISTIC_MALFORMED_FRACTION,
    LandingSize,
    ensure_landing,
)
from bench.measure import run_measured
from bench.run import DEFAULT_OUT, parse_args
from refill.rules.readiness import day_folder, day_readiness
from refill.sample_data import DATASET, DaySpec, write_day, write_days
from tests.helpers import expected_day

REPO = Path(__file__).resolve().parents[2]


def _bench_env() -> dict[str, str]:
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1"}
    for variable in ("REFILL_LANDING", "REFILL_WAREHOUSE", "PREFECT_API_URL", "DBT_TARGET_PATH"):
        env.pop(variable, None)
    return env


@pytest.mark.slow
def test_quick_bench_runs_every_contender_and_writes_its_outputs(tmp_path: Path):
    # GIVEN an empty output folder
    out = tmp_path / "bench-out"
    env = _bench_env()

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
    assert set(summary["contenders"]) == {"a", "b", "c", "d", "e"}
    for figures in summary["contenders"].values():
        assert figures["wall_seconds"] > 0 and figures["peak_rss_bytes"] > 0
    assert set(summary["ratios"]) == {"a/b", "a/c", "d/a", "a/e"}
    assert summary["variant"] == "standard" and "standard data" in table
    assert [entry["days"] for entry in summary["scaling"]] == [2, 5]
    assert sorted(summary["rerun"], key=int) == ["2", "5"]
    assert {target["name"] for target in summary["targets"]} and all(
        target["met"] is not None for target in summary["targets"]
    )
    # the contenders did the same work: same payments, amounts and quarantine
    assert summary["same_result"] is True
    for contender in ("(a) refill", "(b) dbt microbatch", "(c) floor", "(d) naive", "(e) plain"):
        assert contender in table
    # (e) was reconciled against (a): it differs only where refill quarantined lines
    reconciliation = summary["reconciliation"]
    assert reconciliation["days"] == 5
    assert reconciliation["differing_clean_days"] == 0 and reconciliation["unexplained"] == 0
    assert reconciliation["identical_days"] + reconciliation["differing_days"] == 5
    assert "(e) against (a), day by day" in table
    assert "refill/(e) on the standard data" in finished.stdout
    # the commands from the shell: the cold backfill, the next day's daily cold and with a
    # server, a bare dbt build of that day, and where a cold command's time went
    assert set(summary["command"]) == {"a-cold", "daily-cold", "daily-server", "daily-dbt"}
    assert {"a-cold/e", "daily-cold/daily-dbt"} <= set(summary["command_ratios"])
    for role in ("phases-backfill", "phases-daily"):
        phases = summary["phases"][role]
        assert phases["status"] == 0 and phases["not_timed"] == []
        assert phases["phases"]["dbt parse"] > 0 and phases["imports"]["prefect"] > 0
        assert phases["phases"]["server start (launch to answering)"] > 0
    assert "where a cold command's time goes" in table
    # the row rule alone against read_json of the same files
    assert set(summary["row_rule"]) == {"rule", "read_json"}
    assert summary["row_rule_ratios"]["rule/read_json"]["cpu"] > 0


def test_publish_replaces_only_the_results_block(tmp_path: Path):
    # GIVEN a run's output folder and a performance page with a results block
    out, results, docs = tmp_path / "out", tmp_path / "results", tmp_path / "docs"
    out.mkdir()
    docs.mkdir()
    (out / "bench-results.json").write_text("{}")
    (out / "bench-scaling.png").write_bytes(b"\x89PNG")
    page = docs / "performance.md"
    page.write_text(f"intro\n{report.PUBLISH_START}\nold table\n{report.PUBLISH_END}\nfindings\n")

    # WHEN the results are published
    report.publish(out, results, page, "new table\n")

    # THEN the block holds the new table and the text around it stands
    assert page.read_text() == (
        f"intro\n{report.PUBLISH_START}\nnew table\n{report.PUBLISH_END}\nfindings\n"
    )
    # and the JSON and the chart went to the results folder, not beside the page
    assert (results / "bench-latest.json").read_text() == "{}"
    assert (results / "bench-scaling.png").exists()
    assert sorted(p.name for p in docs.iterdir()) == ["performance.md"]


def test_a_variant_publishes_to_its_own_block_and_leaves_the_standard_one(tmp_path: Path):
    # GIVEN a performance page with the standard results and a realistic block
    out, results, docs = tmp_path / "out", tmp_path / "results", tmp_path / "docs"
    out.mkdir()
    docs.mkdir()
    (out / "bench-results.json").write_text('{"variant": "realistic"}')
    standard = f"{report.PUBLISH_START}\nstandard table\n{report.PUBLISH_END}"
    realistic = "<!-- bench:results:realistic:start -->\n{}<!-- bench:results:realistic:end -->"
    page = docs / "performance.md"
    page.write_text(f"{standard}\n{realistic.format('old')}\n")

    # WHEN the realistic variant's results are published
    report.publish(out, results, page, "realistic table\n", "realistic")

    # THEN only its block and its own JSON changed
    assert page.read_text() == f"{standard}\n{realistic.format('realistic table' + chr(10))}\n"
    assert (results / "bench-latest-realistic.json").read_text() == '{"variant": "realistic"}'
    assert not (results / "bench-latest.json").exists()


@pytest.mark.slow
def test_plain_microbatch_publishes_clean_days_as_refill_does_and_differs_only_on_bad_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # GIVEN a landing of two clean days (replays, no malformed line, no conflict), a day with
    # malformed lines and a day with conflicting versions
    landing = tmp_path / "landing"
    first = date(2025, 3, 1)
    clean = DaySpec(payments=200, malformed_rate=0.0, conflict_rate=0.0)
    write_days(landing, first, 2, clean)
    malformed_day, conflict_day = first + timedelta(days=2), first + timedelta(days=3)
    write_day(landing, malformed_day, DaySpec(payments=200, malformed_rate=0.08, conflict_rate=0))
    write_day(landing, conflict_day, DaySpec(payments=200, malformed_rate=0, conflict_rate=0.03))
    unparsable = _unparsable_lines(landing, malformed_day)
    assert unparsable > 0  # the seed gives the malformed day lines read_json cannot parse

    # WHEN refill and (e) each build the four days on a warehouse of their own (refill with
    # a temporary Prefect server of its own, as from the shell)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    bench = contenders.Workbench(out=tmp_path / "bench", product_dir=REPO)
    _, refill_warehouse = contenders.refill_backfill(
        bench, "a-refill", landing, first, conflict_day
    )
    plain_run, plain_warehouse = contenders.plain_microbatch(
        bench, landing, first, conflict_day, "run1"
    )
    days = {
        day.day: day
        for day in reconcile.compare_days(refill_warehouse, plain_warehouse, first, conflict_day)
    }

    # THEN the clean days are identical: same payments, amount and amount_usd
    for offset in range(2):
        day = days[first + timedelta(days=offset)]
        assert expected_day(landing, day.day).quarantined == 0
        assert day.identical and not day.has_bad_lines and day.why == ""
        assert day.refill_payments == day.plain_payments == expected_day(landing, day.day).published
    # the malformed day differs: (e) lost the lines it could not parse and published the rest
    bad = days[malformed_day]
    assert (
        not bad.identical
        and bad.malformed_lines == expected_day(landing, malformed_day).quarantined
    )
    assert bad.lost_lines == unparsable
    assert bad.published_malformed == bad.malformed_lines - unparsable
    assert bad.plain_payments - bad.refill_payments == bad.published_malformed
    # the conflict day differs: (e) published one version of each conflicting transaction
    conflicted = days[conflict_day]
    assert not conflicted.identical and conflicted.conflicting_transactions > 0
    assert conflicted.published_conflicting == conflicted.conflicting_transactions
    assert (
        conflicted.plain_payments - conflicted.refill_payments
        == conflicted.conflicting_transactions
    )
    assert conflicted.lost_lines == 0
    # and nothing differs that a quarantined line does not explain
    assert all(day.unexplained == 0 for day in days.values())
    summary = reconcile.summarise(list(days.values()))
    assert (summary["identical_days"], summary["differing_days"]) == (2, 2)
    assert summary["differing_clean_days"] == 0 and summary["lost_lines"] == unparsable
    assert plain_run.published["rows"] == sum(day.plain_payments for day in days.values())


def test_realistic_landing_plants_few_malformed_lines_in_few_files_and_stays_ready(
    tmp_path: Path,
):
    # GIVEN the generator's days without malformed lines, as the realistic variant starts
    size = LandingSize(date(2025, 1, 1), 6, 300, variant="realistic")
    clean = tmp_path / "clean"
    write_days(clean, size.start, size.days, DaySpec(payments=size.payments, malformed_rate=0))

    # WHEN the realistic landing is written
    realistic = tmp_path / "realistic"
    assert ensure_landing(realistic, size, workers=1)

    # THEN it holds the clean days' lines, plus 0.01% of the lines (at least one a file)
    # planted in a handful of part files, none of them a valid payment
    planted_by_file = {}
    clean_lines = 0
    for day_offset in range(size.days):
        day = size.start + timedelta(days=day_offset)
        for part in sorted(day_folder(clean, DATASET, day).glob("part-*.jsonl")):
            before = part.read_text().splitlines()
            after = (realistic / part.relative_to(clean)).read_text().splitlines()
            clean_lines += len(before)
            assert not Counter(before) - Counter(after)  # every clean line is still there
            planted = list((Counter(after) - Counter(before)).elements())
            if planted:
                planted_by_file[part.relative_to(clean)] = planted
        # the manifests count the planted lines: refill finds every day ready
        assert day_readiness(realistic, DATASET, day).is_ready
    planted_lines = sum(len(lines) for lines in planted_by_file.values())
    wanted = max(round(clean_lines * REALISTIC_MALFORMED_FRACTION), REALISTIC_MALFORMED_FILES)
    assert planted_lines == wanted
    assert len(planted_by_file) == REALISTIC_MALFORMED_FILES
    total_quarantined = sum(
        expected_day(realistic, size.start + timedelta(days=offset)).quarantined
        - expected_day(clean, size.start + timedelta(days=offset)).quarantined
        for offset in range(size.days)
    )
    assert total_quarantined == planted_lines
    # and a second call finds the landing written and leaves it as it is
    assert not ensure_landing(realistic, size, workers=1)


def test_variant_and_contenders_are_chosen_on_the_command_line():
    # WHEN the bench is asked for the realistic variant and two contenders
    config, args = parse_args(["--quick", "--variant", "realistic", "--only", "a,e"])

    # THEN the run is configured for them, and its results go apart from the standard's
    assert (config.variant, config.only, config.everything) == ("realistic", ("a", "e"), False)
    assert args.out == DEFAULT_OUT / "realistic"
    assert parse_args([])[1].out == DEFAULT_OUT
    with pytest.raises(SystemExit):
        parse_args(["--only", "a,x"])


def test_a_small_child_of_a_large_bench_is_measured_at_its_own_size(tmp_path: Path):
    # GIVEN a bench process that has held 300 MiB (its peak), and holds them no more
    held = bytearray(300 * 1024**2)
    for offset in range(0, len(held), 4096):
        held[offset] = 1
    del held

    # WHEN it measures a command that holds almost nothing
    measurement = run_measured(
        [sys.executable, "-c", "pass"], cwd=tmp_path, env=dict(os.environ), log=tmp_path / "log"
    )

    # THEN the peak is the command's, not the bench's (a child's ru_maxrss starts there)
    assert measurement.peak_rss_bytes < 150 * 1024**2


def test_import_seconds_sum_self_time_by_top_level_package():
    # GIVEN `python -X importtime` lines, nested imports among them
    log = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:      1500 |       1500 |     prefect.settings",
            "import time:      2500 |       4000 |   prefect",
            "import time:       700 |        700 |   dbt.cli",
            "import time:       300 |        300 | json",
            "refill backfill: a line of the command's own output",
        ]
    )

    # WHEN they are summed
    seconds = command.import_seconds(log)

    # THEN each package counts its own time once, nested or not; the rest is `other`
    assert seconds == {"dbt": 0.0007, "other": 0.0003, "prefect": 0.004}


def test_command_and_row_rule_ratios_and_their_targets():
    # GIVEN runs of (e), the cold backfill, the daily and its dbt build, and the row rule
    def run(contender: str, wall: float, cpu: float, days: int = 5) -> dict:
        return {
            "contender": contender,
            "label": contender,
            "days": days,
            "wall_seconds": wall,
            "cpu_seconds": cpu,
            "peak_rss_bytes": 1,
            "other_cores": 0.0,
            "published": {},
            "details": {},
        }

    runs = [
        run("e", 10.0, 8.0),
        run("a-cold", 12.0, 9.0),
        run("daily-cold", 6.0, 5.0, 1),
        run("daily-dbt", 5.0, 4.0, 1),
        run("rule", 2.0, 3.0),
        run("rule-baseline", 4.0, 6.0),
        run("read_json", 1.0, 1.0),
    ]

    # WHEN they are summarised
    summary = report.summarise(runs, 5, 1, "realistic")

    # THEN the ratios are the medians' quotients, and the cold targets are read on them
    assert summary["command_ratios"]["a-cold/e"] == {"wall": 1.2, "cpu": 9.0 / 8.0}
    assert summary["command_ratios"]["daily-cold/daily-dbt"] == {"wall": 1.2, "cpu": 1.25}
    assert summary["row_rule_ratios"] == {
        "rule/read_json": {"wall": 2.0, "cpu": 3.0},
        "rule-baseline/read_json": {"wall": 4.0, "cpu": 6.0},
        "rule/rule-baseline": {"wall": 0.5, "cpu": 0.5},
    }
    verdicts = {target["name"]: target for target in summary["targets"]}
    cold = verdicts["(a) at most 0.67× (e) on the realistic data"]
    assert cold["met"] is False and "cold a/e = 1.20" in cold["measured"]
    assert (
        verdicts["`refill daily` cold at most 1.0× a bare `dbt build --vars` of the day"]["met"]
        is False
    )


def test_row_rules_of_a_revision_render_as_this_checkouts_do(tmp_path: Path):
    # GIVEN the row rules as committed at HEAD
    rules = row_rule.rules_at(REPO, "HEAD", tmp_path / "rules")

    # THEN both rules are there and render to SQL with the same calls as this checkout's
    assert sorted(path.name for path in rules.iterdir()) == sorted(
        f"{name}.sql" for name in row_rule.RULE_NAMES
    )
    sql = row_rule.staging_sql(tmp_path, date(2025, 1, 1), date(2025, 1, 2), rules)
    assert "read_blob" in sql and "{{" not in sql


def _unparsable_lines(landing: Path, day: date) -> int:
    """Lines of the day that are not JSON at all: read_json turns each into a row of nulls."""
    count = 0
    for part in day_folder(landing, DATASET, day).glob("part-*.jsonl"):
        for line in part.read_text().splitlines():
            try:
                json.loads(line)
            except ValueError:
                count += 1
    return count
