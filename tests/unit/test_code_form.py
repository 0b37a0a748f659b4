"""refill_code_form (macros/ops/refill_code_form.sql), what a model's or a row rule's code
version hashes: comments and layout change nothing, any token does (issue 34, finding 13).

The macro's own text is rendered here with Jinja alone (no dbt), `modules.re` and `tojson`
given as dbt gives them. The oracles are independent of its tokenizer: the token list the
generator laid out, and, for what Jinja joins and trims, Jinja's own rendering."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import jinja2
from hypothesis import given
from hypothesis import strategies as st

MACRO = Path(__file__).resolve().parents[2] / "macros" / "ops" / "refill_code_form.sql"


class _Returned(Exception):
    def __init__(self, value):
        self.value = value


def _return(value):  # dbt's return(): the macro's value, carried out of the render
    raise _Returned(value)


_TEMPLATE = jinja2.Environment(extensions=["jinja2.ext.do"]).from_string(
    MACRO.read_text() + "{{ refill_code_form(text) }}"
)


def code_form(text: str) -> str:
    try:
        _TEMPLATE.render(
            text=text, modules=SimpleNamespace(re=re), tojson=json.dumps, **{"return": _return}
        )
    except _Returned as returned:
        return returned.value
    raise AssertionError("the macro returned nothing")


def form_tokens(text: str) -> list[str]:
    form = code_form(text)
    assert form.startswith("tokens:"), form
    return json.loads(form.removeprefix("tokens:"))


# -- SQL laid out from a token list ---------------------------------------------------------

# What a literal may hold: comment markers and quotes are text there; a backslash only before
# a letter (before a quote DuckDB and Spark end the literal in different places: see below).
literal_text = st.lists(
    st.sampled_from(
        [
            "a",
            "Z",
            "9",
            " ",
            "  ",
            "\n",
            "\t",
            "--",
            "/*",
            "*/",
            "'",
            '"',
            "`",
            ";",
            "#",
            "$",
            "\\d",
            "é",
        ]
    ),
    max_size=6,
).map("".join)
names = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
numbers = st.one_of(
    st.integers(0, 10**6).map(str),
    st.decimals(0, 1000, places=3, allow_nan=False, allow_infinity=False).map(str),
)
operators = st.sampled_from(
    [
        "=",
        "<",
        ">",
        "<=",
        ">=",
        "<>",
        "!=",
        "||",
        "::",
        "+",
        "-",
        "*",
        "/",
        "%",
        "(",
        ")",
        ",",
        ".",
        ";",
    ]
)


def _quoted(quote: str):
    return literal_text.map(lambda text: quote + text.replace(quote, quote * 2) + quote)


# (kind, text): the kinds a mutation may change
tokens = st.one_of(
    names.map(lambda t: ("name", t)),
    numbers.map(lambda t: ("number", t)),
    _quoted("'").map(lambda t: ("string", t)),
    _quoted('"').map(lambda t: ("identifier", t)),
    _quoted("`").map(lambda t: ("identifier", t)),
    operators.map(lambda t: ("operator", t)),
)
comment_text = st.text(st.sampled_from("ab '\"`-*;$é\\"), max_size=12).filter(
    lambda text: "*/" not in text and "/*" not in text
)
# What may stand between two tokens: at least one space or comment, so no two tokens merge.
gaps = st.one_of(
    st.sampled_from([" ", "  ", "\n", "\n    ", "\t", " \n\n  "]),
    comment_text.map(lambda c: f" --{c}\n"),
    comment_text.map(lambda c: f"/*{c}*/"),
    comment_text.map(lambda c: f"\n/*\n{c}\n*/ "),
    comment_text.map(lambda c: f" {{# {c} #}}"),
    comment_text.map(lambda c: f"{{#- {c} #}}\n"),
)


@st.composite
def laid_out(draw, token_list: list[tuple[str, str]]) -> str:
    """The tokens in order, a random gap between each two, before the first and after the last."""
    parts = [draw(gaps) if draw(st.booleans()) else ""]
    for _, text in token_list:
        parts += [text, draw(gaps)]
    return "".join(parts)


token_lists = st.lists(tokens, min_size=1, max_size=25)


@given(data=st.data(), token_list=token_lists)
def test_any_layout_and_comments_give_the_tokens_the_generator_laid_out(data, token_list):
    # GIVEN a list of SQL tokens laid out twice, each with its own comments and whitespace
    first, second = data.draw(laid_out(token_list)), data.draw(laid_out(token_list))

    # THEN both forms are exactly that list of tokens: none lost, none added, none changed
    assert form_tokens(first) == [text for _, text in token_list]
    assert code_form(first) == code_form(second)


@st.composite
def a_changed_token(draw, token_list: list[tuple[str, str]]):
    """`token_list` with one string literal, quoted identifier, name or number changed."""
    changeable = [i for i, (kind, _) in enumerate(token_list) if kind != "operator"]
    index = draw(st.sampled_from(changeable))
    kind, text = token_list[index]
    other = {"name": names, "number": numbers, "string": _quoted("'")}.get(kind, _quoted(text[0]))
    changed = draw(other.filter(lambda new: new != text))
    return [*token_list[:index], (kind, changed), *token_list[index + 1 :]]


@given(
    data=st.data(), token_list=token_lists.filter(lambda ts: any(k != "operator" for k, _ in ts))
)
def test_a_changed_literal_name_or_number_changes_the_form(data, token_list):
    # GIVEN SQL and the same SQL with one literal, identifier, name or number changed
    changed = data.draw(a_changed_token(token_list))

    # THEN, whatever the layout of each, their forms differ
    assert code_form(data.draw(laid_out(token_list))) != code_form(data.draw(laid_out(changed)))


# -- what Jinja joins and trims --------------------------------------------------------------

# Pieces of a template whose meaning depends on what is next to what: names Jinja's output
# joins to, tags that trim, comments that trim.
pieces = st.sampled_from(
    [
        "a",
        "b",
        "1",
        ",",
        "{{ x }}",
        "{{x}}",
        "{{- x }}",
        "{{ x -}}",
        "{{- x -}}",
        "{% if true %}",
        "{%- if true -%}",
        "{% endif %}",
        "{# c #}",
        "{#- c -#}",
        "{#- c #}",
        "-- c\n",
        "/* c */",
        "'a  b'",
    ]
)
joins = st.sampled_from(["", " ", "\n  "])


@st.composite
def two_templates(draw) -> tuple[str, str]:
    """The same pieces joined twice, each time with its own whitespace between them."""
    chosen = draw(st.lists(pieces, min_size=1, max_size=8))
    both = []
    for _ in range(2):
        text = "".join(piece + draw(joins) for piece in chosen)
        # every if closed, so that Jinja renders it
        opened = text.count("{% if") + text.count("{%- if") - text.count("endif")
        both.append(text + "{% endif %}" * max(0, opened))
    return both[0], both[1]


def rendered_sql_tokens(template: str) -> list[str] | None:
    """The SQL tokens of what Jinja renders (x is `v`), comments removed: the meaning.
    None when Jinja cannot render the template (an endif without an if)."""
    try:
        sql = jinja2.Environment().from_string(template).render(x="v")
    except jinja2.TemplateError:
        return None
    sql = re.sub(r"--[^\n]*|/\*.*?\*/", " ", sql, flags=re.S)
    return re.findall(r"'(?:[^']|'')*'|\w+|\S", sql)


@given(pair=two_templates())
def test_templates_with_one_form_render_the_same_sql(pair):
    # GIVEN the same pieces joined with different whitespace, which Jinja renders
    first, second = pair
    rendered = rendered_sql_tokens(first), rendered_sql_tokens(second)

    # THEN if their forms are equal, so is the SQL Jinja renders from them (a form never
    # hides a change of meaning: `a{{ x }}` renders `av`, `a {{ x }}` renders `a v`)
    if None not in rendered and code_form(first) == code_form(second):
        assert rendered[0] == rendered[1], (first, second)


def test_whitespace_beside_a_tag_counts_unless_the_tag_trims_it():
    assert code_form("select a{{ x }}") != code_form("select a {{ x }}")
    assert code_form("select {{ x }}b") != code_form("select {{ x }} b")
    assert code_form("select a {{- x }}") == code_form("select a{{- x }}")
    assert code_form("select {{ x -}}\n b") == code_form("select {{ x -}}b")
    assert code_form("select {{ ref('m') }}") == code_form("select {{ref( 'm' )}}")
    assert code_form("select {{ -x }}") != code_form("select {{- x }}")


def test_a_jinja_comment_is_removed_as_jinja_removes_it():
    assert code_form("a{# c #}b") == code_form("ab")
    assert code_form("a {#- c -#} b") == code_form("ab")
    assert code_form("a {# c #} b") == code_form("a b")
    assert code_form("'{# c #}'") == code_form("''")


def test_a_comment_marker_inside_a_quoted_token_is_text():
    assert code_form("select '-- a' as x") != code_form("select '-- b' as x")
    assert code_form('select "a /* b */" from t') != code_form('select "a /* c */" from t')
    assert code_form("select 'a  b'") != code_form("select 'a b'")
    assert code_form("select 'it''s' -- it's\n, 1") == code_form("select 'it''s', 1")


def test_a_sql_comment_holding_jinja_is_kept():
    # dbt renders the tag inside the comment: `-- depends_on: {{ ref(...) }}` is a dependency
    assert code_form("-- depends_on: {{ ref('a') }}\nselect 1") != code_form(
        "-- depends_on: {{ ref('b') }}\nselect 1"
    )
    # a trimming tag joins the next line to a comment: `, b` is then commented out
    assert code_form("select a -- c\n{%- if true %}, b{% endif %}") != code_form(
        "select a\n{%- if true %}, b{% endif %}"
    )


def test_where_a_comment_ends_is_not_certain_the_text_is_kept_as_written():
    # DuckDB reads 'a\' as a literal and a comment after it; Spark reads one literal
    for text in (
        "select 'a\\' -- b'",
        "select $q$ -- a $q$",
        "select 1 /* a /* b */ c */",
        "{% raw %}{# a #}{% endraw %}",
    ):
        assert code_form(text) == "text:" + text
