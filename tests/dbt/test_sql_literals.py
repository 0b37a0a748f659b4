"""A date reaches SQL text only as the typed literal of a date refill parsed
(macros/quoting/refill_date_literal.sql): a window's days render as `date 'YYYY-MM-DD'`,
and a string, a datetime or an injection attempt handed to the macro is refused, so no
var or landed value can be pasted where a date goes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from refill.warehouse.dbt_runner import DbtProject


@pytest.fixture(scope="module")
def project() -> DbtProject:
    # its own parse: a failed inline compile leaves its node in the manifest
    return DbtProject()


def compile_inline(project: DbtProject, expression: str, said: list[str] | None = None):
    """dbt's inline compile on the module's parse; `said` collects what dbt logged (the
    refusal's line is a log event: dbt's exception says only that the parse failed)."""
    callbacks = [lambda event: said.append(str(event.info.msg))] if said is not None else []
    result = project.invoke(
        ["compile", "--inline", expression, "--no-populate-cache"], callbacks=callbacks
    )
    for unique_id in [n for n in project.manifest.nodes if n.startswith("sql_operation.")]:
        del project.manifest.nodes[unique_id]
    return result


@given(st.lists(st.dates(), min_size=1, max_size=40))
def test_any_parsed_date_renders_as_its_typed_literal(project, days):
    expression = ",".join(
        f"{{{{ refill_date_literal(modules.datetime.date({d.year}, {d.month}, {d.day})) }}}}"
        for d in days
    )
    result = compile_inline(project, f"select {expression}")
    assert result.success, result.exception
    compiled = result.result.results[0].node.compiled_code.strip()
    assert compiled == "select " + ",".join(f"date '{d.isoformat()}'" for d in days)


@pytest.mark.parametrize(
    "value",
    [
        "'2026-01-01'",
        '"2026-01-01\' or 1=1 --"',
        "modules.datetime.datetime(2026, 1, 1, 12, 0)",
        "20260101",
        "none",
    ],
)
def test_anything_but_a_parsed_date_is_refused(project, value):
    said: list[str] = []
    result = compile_inline(project, f"select {{{{ refill_date_literal({value}) }}}}", said)
    assert not result.success
    assert any("is not a parsed date" in line for line in said), said[-5:]


def test_a_window_predicate_takes_the_window_s_parsed_days(project):
    # the vars are strings on the command line; refill_window parses them, the literal
    # renders the dates it returns
    result = project.invoke(
        [
            "compile",
            "--inline",
            "select {{ refill_window_predicate('d') }}",
            "--vars",
            '{"start_date": "2026-01-01", "end_date": "2026-01-03"}',
            "--no-populate-cache",
        ]
    )
    for unique_id in [n for n in project.manifest.nodes if n.startswith("sql_operation.")]:
        del project.manifest.nodes[unique_id]
    assert result.success, result.exception
    compiled = result.result.results[0].node.compiled_code.strip()
    assert compiled == "select d between date '2026-01-01' and date '2026-01-03'"
