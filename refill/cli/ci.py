"""`refill ci`: what a pull request does to the published numbers, before it is merged.

The checkout (the pull request, uncommitted changes included) and the base ref (a `git
worktree` of it in a temporary folder, removed after) are each built with plain `dbt
build` on the same window, the same landing and the same run id, each into a CI warehouse
of its own (the `ci` target, with a warehouse path under `target/refill-ci/`: never the
dev or prod warehouse); the build runs the project's tests. The two warehouses are then
compared with the one diff engine (refill.warehouse.code_change): every published column
of every partitioned model the base declares (and of those only the change adds), per day
and key; the report is written in markdown (refill.views.code_change_report).

Exit status 0 when the change built and its tests passed, whether numbers move or not and
whether the base built or not (a change that fixes a broken base can pass: its report says
the base did not build and compares nothing); 1 with one line saying what failed, and
where, otherwise, or when another `refill ci` runs in the checkout (refill.cli.ci_checkout:
one run at a time, and what a killed run left is cleaned by the next); 2 for a `--base`
that names no commit, which leaves no report behind. Every other option is checked first
(refill.options: the report path; the dates as parsed here).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

from refill import code_version, interrupts, options, settings
from refill.cli import ci_checkout
from refill.cli.ci_checkout import git as _git
from refill.cli.parser import day_type
from refill.errors import EXIT_OK, RefillError
from refill.rules import planning
from refill.rules.code_change import CodeChangeReport, compared_models
from refill.rules.window import window_vars
from refill.views import code_change_report
from refill.warehouse import code_change
from refill.warehouse.dbt_outcomes import one_line

# The sample window: three days of the generated sample landing (refill.sample_data),
# small enough that both builds take seconds, long enough to show a day that moves
# beside days that do not.
SAMPLE_START = date(2026, 1, 1)
SAMPLE_DAYS = 3
DEFAULT_BASES = ("origin/main", "main")
WORK_FOLDER = Path("target") / "refill-ci"  # in the project, as dbt's own target/
CI_TARGET = "ci"
FAILED = ("error", "fail", "runtime error")
UNCOMMITTED = "+ uncommitted changes"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`refill ci [--base REF] [--start D --end D] [--report FILE]`."""
    parser.add_argument(
        "--base",
        # checked in main (refill.options' rule), once a stale report is out of the way
        dest="base_ref",
        metavar="BASE",
        help="the git ref to compare with (default: origin/main if it exists, else main)",
    )
    parser.add_argument(
        "--start", type=day_type("start"), default=SAMPLE_START, help="first day of the window"
    )
    parser.add_argument(
        "--end",
        type=day_type("end"),
        help=f"last day, inclusive (default: {SAMPLE_DAYS} days from --start)",
    )
    parser.add_argument(
        "--report",
        help=f"the markdown report to write (default: {WORK_FOLDER / 'report.md'} in the project)",
    )


def main(args: argparse.Namespace) -> int:
    project = settings.project_dir()
    start = args.start
    end = args.end or start + timedelta(days=SAMPLE_DAYS - 1)
    window = planning.parse_range(start.isoformat(), end.isoformat())
    work = project / WORK_FOLDER
    report_path = Path(args.report) if args.report else work / "report.md"
    try:
        options.check({"base": args.base_ref})
        base_ref = args.base_ref or default_base(project)
    except RefillError:
        # a refused run leaves no report behind that could pass for its own
        report_path.unlink(missing_ok=True)
        raise
    base_commit = code_version.resolve_ref(project, base_ref)
    with ci_checkout.one_run(work) as run:
        report_path.unlink(missing_ok=True)  # a run killed from here on leaves none either
        return _run(project, work, report_path, window, base_ref, base_commit, run)


def _run(
    project: Path,
    work: Path,
    report_path: Path,
    window: planning.DateRange,
    base_ref: str,
    base_commit: str,
    run: ci_checkout.Run,
) -> int:
    change = change_identity(project)
    for stale in ("base", "change", "landing"):
        shutil.rmtree(work / stale, ignore_errors=True)
    landing = _landing(work / "landing", window)
    # One run id for both builds: the rows' lineage is the same, so every column compares.
    run_id = f"refill-ci-{uuid.uuid4()}"
    print(
        f"refill ci: {window}, this checkout ({change}) against {base_ref} "
        f"({base_commit[:12]}), landing {landing}",
        flush=True,
    )
    report = CodeChangeReport(base_ref, base_commit, change, window.start, window.end)
    with base_checkout(project, base_commit, run) as base_project:
        _progress(f"building the base ({base_ref}) on {window}")
        report.base_failure = build(base_project, work / "base", landing, window, run_id, run)
    if report.base_failure:
        _progress(f"the base {base_ref} {report.base_failure}; nothing will be compared")
    _progress(f"building and testing this change on {window}")
    failure = build(project, work / "change", landing, window, run_id, run)
    if failure:
        line = f"this change {failure}"
        _write(report_path, code_change_report.failed(report, line))
        raise RefillError(line)

    if not report.base_failure:
        _progress("comparing every published column")
        code_change.compare(
            _warehouse(work / "base"),
            _warehouse(work / "change"),
            compared_models(_nodes(work / "base"), _nodes(work / "change")),
            report,
        )
    _write(report_path, code_change_report.markdown(report))
    print(f"refill ci: {code_change_report.summary(report)}; report: {report_path}")
    return EXIT_OK


def default_base(project: Path) -> str:
    for ref in DEFAULT_BASES:
        with contextlib.suppress(RefillError):
            code_version.resolve_ref(project, ref)
            return ref
    raise RefillError(
        f"no --base given and neither {' nor '.join(DEFAULT_BASES)} names a commit; "
        "name the base with --base REF"
    )


def change_identity(project: Path) -> str:
    """The checkout as built: its commit, and "+ uncommitted changes" when any file of the
    project differs from it, untracked ones included (dbt builds a new model file that git
    does not track yet; code_version's `+dirty` looks at tracked files only)."""
    head = _git(project, "rev-parse", "--short=12", "HEAD")
    mine = f":(exclude){WORK_FOLDER.as_posix()}"  # this run's own lock and builds
    changed = _git(project, "status", "--porcelain", "--untracked-files=normal", "--", ".", mine)
    return f"{head} {UNCOMMITTED}" if changed else head


def _nodes(folder: Path) -> dict:
    """The nodes of the manifest a build parsed (what its project declares)."""
    manifest = folder / "target" / "manifest.json"
    try:
        return json.loads(manifest.read_text())["nodes"]
    except (OSError, ValueError, KeyError) as error:
        raise RefillError(f"cannot read {manifest}: {error}") from None


@contextlib.contextmanager
def base_checkout(project: Path, commit: str, run: ci_checkout.Run) -> Iterator[Path]:
    """The project as it is at `commit`: a detached `git worktree` in a temporary folder,
    removed (worktree and folder) when done, whatever happened; recorded in `run` first, so
    that the next run removes it if this one is killed."""
    top = Path(_git(project, "rev-parse", "--show-toplevel"))
    inside = project.resolve().relative_to(top.resolve())
    folder = ci_checkout.base_folder()
    checkout = folder / "base"

    def remove() -> None:
        with contextlib.suppress(RefillError):
            _git(top, "worktree", "remove", "--force", str(checkout))
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(RefillError):
            _git(top, "worktree", "prune")

    interrupts.on_immediate_exit(remove)  # Ctrl-C or SIGTERM ends the command at once
    run.started_worktree(top, checkout, folder)
    try:
        _git(top, "worktree", "add", "--detach", "--quiet", str(checkout), commit)
        yield checkout / inside
    finally:
        remove()
        run.note(worktree=None)


def build(
    project: Path,
    folder: Path,
    landing: Path,
    window: planning.DateRange,
    run_id: str,
    run: ci_checkout.Run,
) -> str | None:
    """`dbt build` of the window from `project` into the CI warehouse in `folder` (its
    target/ and logs/ there too). None when it built and its tests passed, else one line
    saying what failed ("fails to build: ..." or "fails its tests: ...") and where."""
    folder.mkdir(parents=True, exist_ok=True)
    environment = {
        **os.environ,
        settings.TARGET_ENV: CI_TARGET,
        "REFILL_WAREHOUSE": str(_warehouse(folder)),
        "REFILL_LANDING": str(landing),
        settings.PROJECT_DIR_ENV: str(project),
        "DBT_TARGET_PATH": str(folder / "target"),
        "DBT_LOG_PATH": str(folder / "logs"),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    command = [_dbt(), "build", "--target", CI_TARGET, "--no-use-colors"]
    command += ["--project-dir", str(project), "--profiles-dir", str(project)]
    command += ["--vars", json.dumps(window_vars(window.start, window.end, run_id=run_id))]
    log = folder / "dbt-build.log"
    with log.open("w") as output:
        child = subprocess.Popen(
            command, cwd=project, env=environment, stdout=output, stderr=subprocess.STDOUT
        )
        interrupts.on_immediate_exit(child.kill)  # a signal ends the command: dbt with it
        run.started_child(child)  # a SIGKILL does not: the next run ends it
        returncode = child.wait()
        run.note(child=None)
    text = log.read_text(errors="replace")
    failed = _failed_node(folder / "target" / "run_results.json")
    if returncode == 0 and failed is None:
        return None
    if failed is not None:
        unique_id, message = failed
        kind = unique_id.split(".", 1)[0]
        what = "fails its tests" if kind in ("test", "unit_test") else "fails to build"
        return f"{what}: {kind} {unique_id.split('.', 2)[-1]}: {one_line(message)}"
    return f"fails to build: {_first_error(text)}"


def _failed_node(run_results: Path) -> tuple[str, str] | None:
    if not run_results.is_file():
        return None
    results = json.loads(run_results.read_text()).get("results") or []
    for result in results:
        if str(result.get("status")) in FAILED:
            return result["unique_id"], str(result.get("message") or "")
    return None


def _first_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for index, line in enumerate(lines):
        if "Error" in line:
            return one_line(" ".join(lines[index : index + 2]))
    return "dbt failed without saying why (see dbt-build.log)"


def _landing(sample: Path, window: planning.DateRange) -> Path:
    """$REFILL_LANDING when set, else the generated sample landing for the window."""
    if os.environ.get("REFILL_LANDING"):
        return settings.landing_root()
    from refill.sample_data import DaySpec, write_days

    write_days(sample, window.start, (window.end - window.start).days + 1, DaySpec())
    return sample


def _warehouse(folder: Path) -> Path:
    return folder / "ci.duckdb"


def _dbt() -> str:
    beside = Path(sys.executable).with_name("dbt")
    return str(beside) if beside.exists() else shutil.which("dbt") or "dbt"


def _progress(line: str) -> None:
    print(f"refill ci: {line} ...", file=sys.stderr, flush=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
