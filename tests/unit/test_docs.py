"""The README a team reads in five minutes, and the docs pages that say what the code says:
the README's size, its test command and its links; the pages generated or listed from the
code (the CLI, the dbt vars, the environment) kept up to date with it."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 200
# A markdown link or image: [text](target) or ![alt](target); the target up to a space or ).
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)[^)]*\)")
TRY_IT = "## Try it, step by step"


def relative_links(markdown: str) -> list[str]:
    """The link targets of a page that point into the repository: no scheme, no anchor only."""
    targets = [match.group(1) for match in LINK.finditer(markdown)]
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]


def first_bash_block_after(markdown: str, heading: str) -> str:
    after = markdown.split(heading, 1)[1] if heading else markdown
    block = re.search(r"```bash\n(.*?)```", after, re.DOTALL)
    assert block, f"no ```bash block after {heading!r}"
    return block.group(1)


def test_links_are_read_from_markdown_without_schemes_or_anchors_alone():
    text = (
        "[a](docs/a.md) ![b](docs/img/b.png) [c](https://x.org/c) [d](#here) "
        "[e](docs/e.md#part) [f](mailto:x@y.z)"
    )
    assert relative_links(text) == ["docs/a.md", "docs/img/b.png", "docs/e.md#part"]


def test_the_readme_is_read_in_five_minutes_and_names_the_test_command():
    text = README.read_text()
    lines = text.count("\n") + (not text.endswith("\n"))
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; at most {README_MAX_LINES}"
    assert "make test" in text and "make demo" in text


def test_every_relative_link_of_the_readme_points_to_a_file_of_the_repository():
    links = relative_links(README.read_text())
    assert links, "the README links into the docs"
    missing = [link for link in links if not (ROOT / link.split("#", 1)[0]).exists()]
    assert missing == [], f"README.md links to files that do not exist: {missing}"


def test_the_tutorial_runs_the_same_steps_as_the_readme():
    # tests/flows/test_readme.py runs the README's steps on a fresh clone; the tutorial's
    # copy must be those steps, not a version that drifted from them
    readme = first_bash_block_after(README.read_text(), TRY_IT)
    tutorial = first_bash_block_after((DOCS / "tutorial" / "first-backfill.md").read_text(), "")
    assert tutorial == readme


def test_the_cli_reference_is_what_the_parser_says():
    spec = importlib.util.spec_from_file_location(
        "cli_reference", ROOT / "tools" / "cli_reference.py"
    )
    cli_reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cli_reference)
    page = cli_reference.PAGE.read_text()
    assert page == cli_reference.render(), (
        "docs/reference/cli.md: run python tools/cli_reference.py"
    )


def test_every_dbt_var_of_the_project_is_in_the_dbt_vars_page():
    variables = yaml.safe_load((ROOT / "dbt_project.yml").read_text())["vars"]
    page = (DOCS / "reference" / "dbt-vars.md").read_text()
    assert variables, "dbt_project.yml declares its vars"
    assert [name for name in variables if f"`{name}`" not in page] == []


def test_every_environment_variable_refill_reads_is_in_the_settings_page():
    sources = [*(ROOT / "refill").rglob("*.py"), *(ROOT / "flows").rglob("*.py")]
    sources += [*(ROOT / "macros").rglob("*.sql"), ROOT / "profiles.yml"]
    read = set()
    for path in sources:
        read |= set(re.findall(r"\bREFILL_[A-Z_]+[A-Z]\b", path.read_text()))
    page = (DOCS / "reference" / "settings.md").read_text()
    assert "REFILL_LANDING" in read
    assert sorted(name for name in read if f"`{name}`" not in page) == []
