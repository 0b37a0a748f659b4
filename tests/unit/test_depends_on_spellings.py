"""refill_refs_in_depends_on_lines (macros/window/refill_work_relation.sql) finds ref() of a
work table on a `-- depends_on:` line in any of ref()'s spellings, and nothing else: the
refusal of such a line (a line comment cannot hold the window's computed rows) rests on it.

The macro's own text is rendered here with Jinja alone (no dbt), `modules.re` and
`model.raw_code` given as dbt gives them; the oracle is where the generator put the call."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import jinja2
from hypothesis import given
from hypothesis import strategies as st

MACROS = Path(__file__).resolve().parents[2] / "macros" / "window" / "refill_work_relation.sql"
WORK_TABLE = "stg_payments__manifests"


class _Returned(Exception):
    def __init__(self, value):
        self.value = value


def _return(value):  # dbt's return(): the macro's value, carried out of the render
    raise _Returned(value)


def refs_in_depends_on_lines(raw_code: str, name: str = WORK_TABLE) -> int:
    source = MACROS.read_text()
    start = source.index("{% macro refill_refs_in_depends_on_lines(name) %}")
    macro = source[start : source.index("{% endmacro %}", start) + len("{% endmacro %}")]
    template = jinja2.Environment().from_string(
        macro + "{{ refill_refs_in_depends_on_lines(name) }}"
    )
    try:
        template.render(
            name=name,
            model={"raw_code": raw_code},
            modules=SimpleNamespace(re=re),
            **{"return": _return},
        )
    except _Returned as returned:
        return returned.value
    raise AssertionError("the macro returned nothing")


quote = st.sampled_from(["'", '"'])
space = st.sampled_from(["", " ", "  ", "\t"])


@st.composite
def ref_calls(draw, name: str = WORK_TABLE) -> str:
    """ref() of `name` as a model author may write it: either quote, any spacing, with or
    without the package first, with or without a version after."""
    q, s = draw(quote), draw(space)
    args = [f"{q}{name}{q}"]
    if draw(st.booleans()):
        args.insert(0, f"{draw(quote)}{draw(st.sampled_from(['refill', 'my_pkg']))}{draw(quote)}")
    if draw(st.booleans()):
        args.append(f"{draw(st.sampled_from(['v', 'version']))}={draw(st.integers(1, 3))}")
    return f"ref({s}{(',' + draw(space)).join(args)}{s})"


@given(call=ref_calls(), on_the_line=st.booleans(), lead=space)
def test_a_ref_of_the_work_table_counts_only_on_a_depends_on_line(call, on_the_line, lead):
    body = f"select landed_date from {{{{ {call} }}}}\n"
    line = f"--{lead}depends_on: {{{{ {call} }}}}\n" if on_the_line else "-- a note\n"
    assert refs_in_depends_on_lines("{{ config(materialized='view') }}\n" + line + body) == int(
        on_the_line
    )


@given(call=ref_calls(name="stg_payments__manifests_archive"), lead=space)
def test_another_relation_or_the_lineage_macro_never_counts(call, lead):
    for named in (call, f"refill_lineage_ref('{WORK_TABLE}')", f"builtins.ref('{WORK_TABLE}')"):
        assert refs_in_depends_on_lines(f"--{lead}depends_on: {{{{ {named} }}}}\nselect 1\n") == 0
