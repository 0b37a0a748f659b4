"""`refill ci` end to end on a clone of the project: a base branch (the project as it is)
and branches that change it. The report names exactly the days and markets a changed mart
moves (the oracle reads the landing, without refill's code), a change that moves no number
says so, a change whose tests fail and a ref that names nothing are refused in one line.

Each run builds the base and the change on the default sample window (three days of the
generated sample landing): about a minute a run on a quiet machine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from refill.cli.ci import SAMPLE_DAYS, SAMPLE_START, WORK_FOLDER
from tests.helpers import PROJECT_PARTS, expected_day

REFILL = Path(sys.executable).with_name("refill")
PROJECT = Path(__file__).resolve().parents[2]
V2 = Path("models/marts/revenue/fct_daily_revenue_v2.sql")
V2_RULES = Path("macros/revenue/fct_daily_revenue_expected_sql.sql")
SAMPLE = [SAMPLE_START + timedelta(days=n) for n in range(SAMPLE_DAYS)]
# The change: v2 leaves out one market's refunds from its second day on, in the mart and
# in the rules its audit checks it against (a change of method that passes its tests).
MOVED_MARKET, FROM_DAY = "FR", SAMPLE[1]
LEAVE_OUT = (
    f"not (status = 'refunded' and market = '{MOVED_MARKET}' and event_date >= date '{FROM_DAY}')"
)


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=refill test", "-c", "user.email=test@example.invalid", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A git repository holding a copy of the project, committed on `main` (the base)."""
    folder = tmp_path_factory.mktemp("refill-ci") / "project"
    folder.mkdir()
    for part in PROJECT_PARTS:
        source = PROJECT / part
        if source.is_dir():
            subprocess.run(["cp", "-r", str(source), str(folder / part)], check=True)
        else:
            (folder / part).write_bytes(source.read_bytes())
    (folder / ".gitignore").write_text("target/\nlogs/\nwarehouse/\n")
    git(folder, "init", "--quiet", "--initial-branch=main")
    git(folder, "add", "--all")
    git(folder, "commit", "--quiet", "-m", "the project as it is")
    return folder


def branch(clone: Path, name: str, edits: dict[Path, tuple[str, str]]) -> None:
    """Check out a new branch of main with each file's (old, new) text replaced, committed."""
    git(clone, "checkout", "--quiet", "main")
    git(clone, "checkout", "--quiet", "-b", name)
    for path, (old, new) in edits.items():
        text = (clone / path).read_text()
        assert text.count(old) == 1, f"{path}: {old!r} is not there once"
        (clone / path).write_text(text.replace(old, new))
    git(clone, "commit", "--quiet", "--all", "-m", name)


def refill_ci(clone: Path, *args: str) -> subprocess.CompletedProcess:
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("REFILL_PROJECT_DIR", "REFILL_LANDING", "REFILL_WAREHOUSE", "DBT_TARGET")
        and not key.startswith("DBT_TARGET_PATH")
    }
    environment["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    return subprocess.run(
        [str(REFILL), "ci", *args],
        cwd=clone,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1200,
    )


def report_rows(report: Path) -> dict[tuple[date, str, str, str], tuple[Decimal, Decimal]]:
    """The report's table: (day, model, market, measure) -> (base, this change)."""
    rows = {}
    for line in report.read_text().splitlines():
        if not line.startswith("| 20"):
            continue
        day, model, market, measure, base, change = line.strip("| ").split(" | ")[:6]
        rows[(date.fromisoformat(day), model, market, measure)] = (
            Decimal(base.replace(",", "")),
            Decimal(change.replace(",", "")),
        )
    return rows


def left_out_per_day(landing: Path) -> dict[date, int]:
    """The oracle: per day of the sample, the published refunds of the market the change
    leaves out, counted from the landing's files."""
    counts = {}
    for day in SAMPLE:
        records = expected_day(landing, day).records
        counts[day] = sum(
            1
            for _tx, _ts, _amount, _currency, market, status in records
            if market == MOVED_MARKET and status == "refunded" and day >= FROM_DAY
        )
    return counts


def test_a_changed_mart_reports_exactly_the_days_and_markets_it_moves(clone, tmp_path):
    branch(
        clone,
        "leave-out-refunds",
        {
            V2: (
                "and status in ('captured', 'refunded')\n",
                f"and status in ('captured', 'refunded')\n        and {LEAVE_OUT}\n",
            ),
            V2_RULES: (
                "    from {{ payments }}\n    group by 1\n",
                f"    from {{{{ payments }}}}\n    where {LEAVE_OUT}\n    group by 1\n",
            ),
        },
    )
    report = tmp_path / "report.md"
    done = refill_ci(clone, "--base", "main", "--report", str(report))
    assert done.returncode == 0, done.stderr
    for step in ("building the base", "building and testing this change", "comparing"):
        assert step in done.stderr

    left_out = left_out_per_day(clone / WORK_FOLDER / "landing")
    moved_days = {day for day, count in left_out.items() if count}
    assert moved_days, "the sample has no refund to leave out: the test shows nothing"
    rows = report_rows(report)
    assert {(day, model, market) for day, model, market, _ in rows} == {
        (day, "fct_daily_revenue_v2", MOVED_MARKET) for day in moved_days
    }
    for day in moved_days:
        base, change = rows[(day, "fct_daily_revenue_v2", MOVED_MARKET, "transactions")]
        assert base - change == left_out[day]
    assert f"{len(moved_days)} day(s)" in done.stdout


def test_a_change_that_moves_no_number_says_so(clone, tmp_path):
    branch(clone, "comment-only", {V2: ("-#}\n", "    (a comment: no number moves)\n-#}\n")})
    report = tmp_path / "report.md"
    done = refill_ci(clone, "--base", "main", "--report", str(report))
    assert done.returncode == 0, done.stderr
    assert "no published number changes" in done.stdout
    assert "no published number changes" in report.read_text()
    assert report_rows(report) == {}
    assert "models compared: fct_daily_revenue_v1, fct_daily_revenue_v2, fct_payments" in (
        report.read_text()
    )


def test_a_change_whose_tests_fail_exits_non_zero_in_one_line(clone, tmp_path):
    # v2 leaves out a market's refunds without its rules (nor its unit test) knowing
    branch(
        clone,
        "untested-change",
        {V2: ("and status in ('captured', 'refunded')\n", "and status = 'captured'\n")},
    )
    report = tmp_path / "report.md"
    done = refill_ci(clone, "--base", "main", "--report", str(report))
    assert done.returncode == 1
    errors = done.stderr.strip().splitlines()[-1]
    assert errors.startswith("refill: error: this change fails its tests: ")
    assert "fct_daily_revenue" in errors
    assert errors.removeprefix("refill: error: ") in report.read_text()


@pytest.mark.parametrize("ref", ["no-such-branch", "--output=/tmp/x", "main~99"])
def test_a_ref_that_names_no_commit_is_refused_in_one_line(clone, ref):
    git(clone, "checkout", "--quiet", "main")
    shutil.rmtree(clone / WORK_FOLDER, ignore_errors=True)
    done = refill_ci(clone, f"--base={ref}")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("refill: error: --base: ")
    assert not (clone / WORK_FOLDER).exists()  # refused before anything was built
