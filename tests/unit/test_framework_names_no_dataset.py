"""The framework names no dataset: refill's Python (refill/ and flows/) says nothing of the
payments example in its code or its string literals. Every name it shows (a dataset, a
model, a column, a key, a measure) comes from the dbt project's declaration
(refill.rules.catalog), so a team's own dataset reads in its own words.

Scoped to Python: the framework's macros still name the example while they are converted
(issue 35), so they are not scanned here yet.

What is scanned: every identifier and every string literal (f-strings' text included),
read through the syntax tree, so comments and docstrings (which may cite the example as
an example) are not. Left out: the example's own data writers (refill/sample_data.py,
refill/cli/sample_data.py) and the demo that runs it (refill/cli/demo.py).

The example's words: payments (fct_payments, stg_payments__...), USD, market, currency,
transaction_id. A bare "transaction" is the database's word (one commit) and stays.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("refill", "flows")
THE_EXAMPLES_OWN = {"refill/sample_data.py", "refill/cli/sample_data.py", "refill/cli/demo.py"}
# A word of the example, standing alone or as a part of a snake_case or dotted name
# (fct_payments, amount_usd), but not inside another word (concurrency).
EXAMPLE_WORD = re.compile(
    r"(?<![a-z])(payments?|usd|markets?|currenc(?:y|ies)|transaction_id)(?![a-z])",
    re.IGNORECASE,
)


def framework_files() -> list[Path]:
    files = sorted(path for folder in SCANNED for path in (ROOT / folder).rglob("*.py"))
    return [path for path in files if path.relative_to(ROOT).as_posix() not in THE_EXAMPLES_OWN]


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of the nodes that are docstrings (a module's, a class's, a function's)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                found.add(id(body[0].value))
    return found


def words_of(node: ast.AST) -> list[str]:
    """The names a node introduces or uses, or its text when it is a string literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword):
        return [node.arg] if node.arg else []
    if isinstance(node, ast.alias):
        return [node.name, node.asname or ""]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    return []


def example_words(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line: word (in "text")` for every example word in `path`'s code and literals
    (the file named relative to `root`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        for text in words_of(node):
            for match in EXAMPLE_WORD.finditer(text):
                where = f"{path.relative_to(root).as_posix()}:{getattr(node, 'lineno', '?')}"
                found.append(f"{where}: {match.group(0)} (in {text!r})")
    return sorted(set(found))


@pytest.mark.parametrize(
    "text, named",
    [
        ("fct_payments", True),
        ('f"{rows} payments"', True),
        ("amount_usd", True),
        ("per day and market", True),
        ("currencies", True),
        ("transaction_id", True),
        ("max_concurrency", False),
        ("one transaction per chunk", False),
        ("marketing", False),
    ],
)
def test_the_scan_knows_the_examples_words_from_the_frameworks(text, named):
    assert bool(EXAMPLE_WORD.search(text)) is named


def test_the_scan_reads_code_and_literals_but_not_comments_or_docstrings(tmp_path):
    # GIVEN a module citing the example in its docstring and a comment, and naming it in code
    module = tmp_path / "module.py"
    module.write_text(
        '"""Cites the payments example."""\n'
        "# a comment on payments\n"
        "def f():\n"
        '    """Also cites USD."""\n'
        '    return "restates 3 payments"\n',
        encoding="utf-8",
    )
    # WHEN it is scanned
    found = example_words(module, root=tmp_path)

    # THEN only the literal is found, with its file and line
    assert found == ["module.py:5: payments (in 'restates 3 payments')"]


def test_the_framework_names_no_dataset_column_currency_or_dimension():
    # GIVEN every Python file of the framework
    files = framework_files()
    assert len(files) > 50, "the scan found the framework's files"

    # WHEN each is scanned for the example's words
    found = [finding for path in files for finding in example_words(path)]

    # THEN none is named: every such word comes from the declaration
    assert not found, "the framework names the example:\n" + "\n".join(found)
