"""The command line's conventions: exit statuses, --version, choices and defaults in --help,
one line for one failure."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date, timedelta

import pytest

from refill.cli import build_parser, main
from refill.errors import EXIT_FAILURE, EXIT_OK, EXIT_PIPE_CLOSED, EXIT_USAGE
from refill.sample_data import DaySpec, write_day, write_days
from refill.warehouse.dbt_runner import shared_project
from tests.helpers import file_checksum, query
from tests.runs import run_backfill

D1 = date(2026, 2, 1)


def d(n: int) -> date:
    return D1 + timedelta(days=n - 1)


def exit_status(arguments: list[str]) -> int:
    try:
        return main(arguments)
    except SystemExit as exit_:
        return int(exit_.code or 0)


def test_version_names_refill_and_what_it_runs_on(capsys):
    assert exit_status(["--version"]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith("refill ") and "dbt-core" in out and "prefect" in out


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["backfill"], "needs an explicit range"),
        (["backfill", "--start", "2026-02-05", "--end", "2026-02-01"], "is before --start"),
        (["backfill", "--start", "2026-02-31", "--end", "2026-03-01"], "is not an ISO date"),
        (
            ["backfill", "--start", "2026-02-01", "--end", "2026-02-02", "--chunk-days", "0"],
            "--chunk-days",
        ),
        (
            ["backfill", "--start", "2026-02-01", "--end", "2026-02-02", "--chunk-days", "x"],
            "invalid int",
        ),
        (
            ["backfill", "--start", "2026-02-01", "--end", "2026-02-02", "--order", "up"],
            "invalid choice",
        ),
        (
            ["backfill", "--start", "2026-02-01", "--end", "2026-02-02", "--on-missing", "x"],
            "invalid choice",
        ),
        (
            ["backfill", "--start", "2026-02-01", "--end", "2026-02-02", "--max-concurrency", "0"],
            "--max-concurrency",
        ),
        (["daily", "--date", "tomorrow"], "is not an ISO date"),
        (["daily", "--bogus"], "unrecognized arguments"),
        (["status", "--start", "2026-13-01"], "is not an ISO date"),
        (["gaps", "--end", "yesterday"], "is not an ISO date"),
        ([], "the following arguments are required"),
    ],
)
def test_a_usage_error_exits_2_with_one_line(workspace, capsys, arguments, message):
    status = exit_status(arguments)

    error = capsys.readouterr().err.strip()
    assert status == EXIT_USAGE
    assert error.startswith("refill: error:") and message in error and "\n" not in error
    assert not workspace.warehouse.exists()


@pytest.mark.parametrize(
    "arguments",
    [
        ["gaps", "--start", "2026-02-01", "--end", "2026-02-02"],
        ["status", "--start", "2026-02-01", "--end", "2026-02-02"],
        ["daily", "--date", "2026-02-01", "--retries", "1"],
        ["backfill", "--start", "2026-02-01", "--end", "2026-02-02", "--dry-run"],
        ["board", "--start", "2026-02-01", "--end", "2026-02-02", "--out", "board.html"],
    ],
)
def test_an_unknown_target_is_a_configuration_error_on_every_command(
    workspace, capsys, monkeypatch, arguments
):
    # GIVEN a DBT_TARGET that profiles.yml does not have
    monkeypatch.setenv("DBT_TARGET", "prd")

    # WHEN a command runs
    status = exit_status(arguments)

    # THEN it exits 2 (not 1, which `gaps` gives for gaps found) with one line naming the
    # targets there are, and no other line says it
    out, err = capsys.readouterr()
    assert status == EXIT_USAGE
    assert err.strip() == (
        "refill: error: DBT_TARGET 'prd' is not a target of profiles.yml "
        "(targets: dev, duckdb, ci, prod, spark, spark-cluster)"
    )
    assert "prd" not in out
    assert not workspace.warehouse.exists()


def test_the_help_says_an_unknown_target_cannot_run_here(monkeypatch):
    monkeypatch.setenv("DBT_TARGET", "prd")
    epilog = " ".join(build_parser().format_help().split())
    assert "Cannot run here: DBT_TARGET 'prd' is not a target of profiles.yml (targets: " in epilog
    assert "Uses the DBT_TARGET" not in epilog


def test_help_shows_the_choices_and_the_defaults():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    backfill_help = " ".join(commands["backfill"].format_help().split())
    assert "{newest-first,oldest-first}" in backfill_help
    assert "{fail,skip,wait}" in backfill_help
    assert "(default: newest-first)" in backfill_help and "(default: 92)" in backfill_help
    assert "(default: 300,600)" in backfill_help and "(default: 3600)" in backfill_help
    daily_help = " ".join(commands["daily"].format_help().split())
    assert "(default: 0)" in daily_help and "(default: yesterday, UTC)" in daily_help
    assert "exit status" in parser.format_help()


pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_daily_of_a_published_day_refuses_without_yes_showing_its_totals(workspace, capsys):
    # GIVEN a published day
    write_days(workspace.landing, D1, 1, DaySpec(payments=40))
    run_backfill(start=d(1), end=d(1))
    before = file_checksum(workspace.warehouse)
    capsys.readouterr()

    # WHEN `refill daily --date` names it, without --yes
    status = main(["daily", "--date", str(d(1)), "--retries", "1"])

    # THEN a refusal (exit 1) in one line with the totals readers see now, in the words
    # the dataset declares (its rows, its totals column); nothing changed
    error = capsys.readouterr().err.strip()
    facts = shared_project().catalog.primary
    ((rows, total),) = query(
        workspace.warehouse,
        f"select count(*), sum({facts.totals_column}) from main.{facts.facts_model}",
    )
    assert status == EXIT_FAILURE
    assert error.startswith(
        f"refill: error: daily 2026-02-01 restates a published day ({rows} rows, "
        f"{facts.totals_column} {total:,.2f} now published)"
    )
    assert rows == 40 and "--yes" in error and "\n" not in error
    assert file_checksum(workspace.warehouse) == before

    # AND with --yes it restates the day
    assert main(["daily", "--date", str(d(1)), "--retries", "1", "--yes"]) == EXIT_OK


def test_gaps_exits_1_when_it_finds_gaps_and_0_when_there_are_none(workspace, capsys):
    write_days(workspace.landing, D1, 2, DaySpec(payments=40))
    run_backfill(start=d(2), end=d(2))
    window = ["--start", str(d(1)), "--end", str(d(2))]

    assert main(["gaps", *window]) == EXIT_FAILURE  # day 1 is missing
    assert "2026-02-01  missing" in capsys.readouterr().out
    run_backfill(start=d(1), end=d(1))
    assert main(["gaps", *window]) == EXIT_OK


def test_max_concurrency_is_recorded_and_said_not_discarded(workspace):
    write_days(workspace.landing, D1, 2, DaySpec(payments=40))

    status = main(["backfill", "--start", str(d(1)), "--end", str(d(2)), "--max-concurrency", "4"])

    assert status == EXIT_OK
    recorded = query(
        workspace.warehouse,
        "select parameters->>'$.max_concurrency', parameters->>'$.effective_concurrency' "
        "from ops.run_log",
    )
    assert recorded == [("4", "1")]


def test_one_failure_prints_one_line_once_and_exits_1(workspace):
    # GIVEN a day whose export has not landed
    write_day(workspace.landing, d(1), DaySpec(write_manifest=False))
    from prefect.settings import PREFECT_API_URL

    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}

    # WHEN `refill daily` runs for it from the shell
    command = [sys.executable, "-m", "refill", "daily", "--date", str(d(1)), "--retries", "1"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)

    # THEN it exits 1, and the terminal shows the failure once, as the last line
    output = done.stdout + done.stderr
    assert done.returncode == EXIT_FAILURE, output[-2000:]
    # (the one dataset named as the project declares it)
    (dataset,) = shared_project().catalog.names
    assert output.count(f"{dataset} not ready") == 1, output
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"refill: error: daily 2026-02-01: {dataset} not ready")
    assert "Traceback" not in output


RANGE = ["--start", "2026-02-01", "--end", "2026-02-02"]


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["backfill", *RANGE, "--lock-wait", "-1"], "--lock-wait"),
        (["backfill", *RANGE, "--lock-wait", "nan"], "--lock-wait"),
        (["backfill", *RANGE, "--retries", "-1"], "--retries"),
        (["backfill", *RANGE, "--retries", "0"], "--retries"),
        (["backfill", *RANGE, "--retry-delay", "5,-1"], "--retry-delay"),
        (["backfill", *RANGE, "--on-missing", "wait", "--poll", "0", "--wait", "1"], "--poll"),
        (["backfill", *RANGE, "--on-missing", "wait", "--wait", "-3"], "--wait"),
        (["backfill", *RANGE, "--preview", "--expect-change", "2026-02-01"], "--expect-change"),
        (["daily", "--date", "2026-02-01", "--wait", "-1"], "--wait"),
        (["daily", "--date", "2026-02-01", "--lock-wait", "inf"], "--lock-wait"),
        (["daily", "--date", "2026-02-01", "--poll", "-1"], "--poll"),
        (["gaps", "--min-hole-hours", "0"], "--min-hole-hours"),
        (["gaps", "--fix", "--retries", "-1"], "--retries"),
        (["gaps", "--fix", "--chunk-days", "0"], "--chunk-days"),
        (["cutover", "fct_daily_revenue", "--to", "2", "--lock-wait", "-1"], "--lock-wait"),
    ],
)
def test_an_option_value_out_of_range_exits_2_in_one_line_before_anything_runs(
    workspace, capsys, arguments, message
):
    # WHEN a command gets an option value no data can make right
    status = exit_status(arguments)

    # THEN it is refused in one line naming the option, exit 2, and nothing was opened
    error = capsys.readouterr().err.strip()
    assert status == EXIT_USAGE, error
    assert error.startswith("refill: error:") and message in error and "\n" not in error
    assert not workspace.warehouse.exists()


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_a_report_dir_that_cannot_be_a_folder_is_refused_before_the_preview(
    workspace, capsys, tmp_path, where
):
    # GIVEN a published day, and a --report-dir that names a file (or a folder inside one)
    write_days(workspace.landing, D1, 1, DaySpec(payments=40))
    run_backfill(start=d(1), end=d(1))
    before = file_checksum(workspace.warehouse)
    blocker = tmp_path / "report.txt"
    blocker.write_text("not a folder")
    report_dir = blocker if where == "a file" else blocker / "reports"
    capsys.readouterr()

    # WHEN a preview is asked to save its report there
    status = exit_status(
        ["backfill", "--start", str(d(1)), "--end", str(d(1)), "--restate", "--preview"]
        + ["--report-dir", str(report_dir), "--retries", "1"]
    )

    # THEN one line, exit 2, before anything ran: no preview kept, the warehouse untouched
    error = capsys.readouterr().err.strip()
    assert status == EXIT_USAGE, error
    assert error.startswith("refill: error: --report-dir") and "\n" not in error
    assert file_checksum(workspace.warehouse) == before


def test_a_closed_pipe_ends_the_command_quietly(workspace):
    # GIVEN `refill status` writing into a pipe whose reader has gone (`| head -0`)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "refill", "status", "--start", "2026-01-01", "--end"]
            + ["2026-02-01"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)

    # THEN it ends quietly: no traceback, no "Exception ignored", the pipe's own status
    assert done.stderr == ""
    assert done.returncode == EXIT_PIPE_CLOSED
