"""The GitHub workflows run a pull request's code with the least the job needs: a token that
may only read the repository and is not left in .git/config, one run per pull request at a
time, and no text the pull request controls pasted into a script."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

WORKFLOWS = sorted((Path(__file__).resolve().parents[2] / ".github" / "workflows").glob("*.yml"))
# Values of the event that the pull request's author writes (a title, a branch name, a
# body): as `${{ }}` in a `run:` script they are shell text the author chose.
AUTHORED = re.compile(
    r"\$\{\{\s*github\.(head_ref|base_ref|event\.(pull_request|issue|comment|review|head_commit)"
    r"\.[\w.]*(title|body|ref|label|message|name|email))"
)


def steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_there_are_workflows():
    assert {path.name for path in WORKFLOWS} >= {"ci.yml", "refill-ci.yml"}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_a_workflow_token_only_reads_and_is_not_left_for_the_code_it_runs(path):
    workflow = yaml.safe_load(path.read_text())
    assert workflow.get("permissions") == {"contents": "read"}
    for job in workflow["jobs"].values():
        assert set((job.get("permissions") or {}).values()) <= {"read", "none"}
    checkouts = [
        s for s in steps(workflow) if str(s.get("uses", "")).startswith("actions/checkout")
    ]
    assert checkouts
    for step in checkouts:
        assert (step.get("with") or {}).get("persist-credentials") is False


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_a_workflow_runs_once_per_pull_request_and_caches_its_installs(path):
    workflow = yaml.safe_load(path.read_text())
    group = (workflow.get("concurrency") or {}).get("group", "")
    assert "github.event.pull_request.number" in group
    pythons = [
        s for s in steps(workflow) if str(s.get("uses", "")).startswith("actions/setup-python")
    ]
    assert pythons and all((s.get("with") or {}).get("cache") == "pip" for s in pythons)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_no_text_the_pull_request_writes_is_pasted_into_a_script(path):
    workflow = yaml.safe_load(path.read_text())
    for step in steps(workflow):
        assert not AUTHORED.search(str(step.get("run", ""))), step["run"]
