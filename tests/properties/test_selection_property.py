"""Property: a selection is a set. For any dbt selection of a window (several selectors, `+`
and `n+` either side, `@`, tags, paths, configs, `state:` against a state manifest, an
intersection), a backfill's selection rebuilds every partitioned model downstream of any
model it rebuilds, all published in the same commit, or one line refuses it.

The oracle is the graph itself: each selector's nodes and their descendants computed here
from dbt's parent map (the manifest's `parent_map`), not by refill or by dbt's selector."""

from __future__ import annotations

import itertools
import json
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from refill.errors import UsageError
from refill.rules.window import window_vars
from refill.sample_data import DaySpec, write_day
from tests.helpers import audits_twins_of, query

DAY = date(2026, 5, 4)
NAMES = (
    "stg_payments__raw_lines",
    "stg_payments__manifests",
    "stg_payments__lines",
    "fct_payments",
    "payments_quarantine",
    "fct_daily_revenue",
    "fct_daily_revenue.v1",
    "fct_daily_revenue_v2",
    "fx_rates_daily",
    "source:payments",
    "source:payments.manifests",
    "no_such_model",
)
METHODS = (
    "tag:staging",
    "tag:payments",
    "tag:revenue",
    "path:models/marts/revenue",
    "path:models/staging",
    "config.materialized:partitioned",
    "state:modified",
)
MODELS_TO_MODIFY = ("stg_payments__lines", "fct_payments", "payments_quarantine")
RUNS = itertools.count(1)
# A build is a function of the resolved selection: each distinct one is built once a session
# (a few seconds each), the resolution itself is checked for every example.
BUILT: set[str] = set()


class Graph:
    """The manifest's nodes and edges, read directly: the oracle's own view."""

    def __init__(self, manifest) -> None:
        written = manifest.writable_manifest()
        self.parents = {node: set(parents) for node, parents in written.parent_map.items()}
        self.children: dict[str, set[str]] = {node: set() for node in self.parents}
        for node, parents in self.parents.items():
            for parent in parents:
                self.children.setdefault(parent, set()).add(node)
        self.nodes = {**manifest.nodes, **manifest.sources}

    def reach(self, start: set[str], edges: dict[str, set[str]], depth: int | None) -> set[str]:
        found, frontier, level = set(start), set(start), 0
        while frontier and (depth is None or level < depth):
            frontier = {n for node in frontier for n in edges.get(node, ())} - found
            found |= frontier
            level += 1
        return found

    def named(self, name: str) -> set[str]:
        if name.startswith("source:"):
            wanted = name.removeprefix("source:").split(".")
            return {
                unique_id
                for unique_id, node in self.nodes.items()
                if node.resource_type == "source"
                and [node.source_name, node.name][: len(wanted)] == wanted
            }
        base, _, version = name.partition(".v")
        found = set()
        for unique_id, node in self.nodes.items():
            if node.resource_type not in ("model", "seed"):
                continue
            alias = getattr(node, "alias", None)
            if (node.name == base and (not version or str(node.version) == version)) or (
                alias == name and getattr(node, "version", None) is not None
            ):
                found.add(unique_id)
        return found

    def method(self, selector: str, modified: set[str]) -> set[str]:
        kind, _, value = selector.partition(":")
        models = {u: n for u, n in self.nodes.items() if n.resource_type == "model"}
        if kind == "tag":
            return {u for u, n in models.items() if value in n.tags}
        if kind == "path":
            return {u for u, n in models.items() if n.original_file_path.startswith(value)}
        if kind == "config.materialized":
            return {u for u, n in models.items() if n.config.materialized == value}
        if kind == "state":
            return {u for u, n in models.items() if n.name in modified}
        raise AssertionError(selector)


@st.composite
def selectors(draw) -> tuple[str, object]:
    """One selector and what it means: ('name', name, up, down, at) or ('method', m)."""
    if draw(st.booleans()):
        return draw(st.sampled_from(METHODS)), ("method",)
    name = draw(st.sampled_from(NAMES))
    if draw(st.integers(0, 5)) == 0 and not name.startswith("source:"):
        return f"@{name}", ("at", name)
    up = draw(st.sampled_from((0, 0, 1, None)))  # None: every ancestor (`+x`)
    down = draw(st.sampled_from((0, 0, 1, None)))
    text = ("+" if up is None else "1+" if up == 1 else "") + name
    text += "+" if down is None else "+1" if down == 1 else ""
    return text, ("name", name, up, down)


@st.composite
def selections(draw) -> tuple[str, list, frozenset[str]]:
    """A union of 1-3 terms, each a selector or an intersection of two."""
    terms = []
    for _ in range(draw(st.integers(1, 3))):
        term = [draw(selectors())]
        if draw(st.integers(0, 4)) == 0:
            term.append(draw(selectors()))
        terms.append(term)
    modified = frozenset(draw(st.sets(st.sampled_from(MODELS_TO_MODIFY), max_size=2)))
    text = " ".join(",".join(text for text, _ in term) for term in terms)
    return text, terms, modified


def oracle(graph: Graph, terms: list, modified: frozenset[str], partitioned: set[str]):
    """(models rebuilt, or None when the selection selects no model) by the graph alone."""
    selected: set[str] = set()
    for term in terms:
        sets = []
        for text, meaning in term:
            if meaning[0] == "method":
                sets.append(graph.method(text, set(modified)))
                continue
            base = graph.named(meaning[1])
            if meaning[0] == "at":
                down = graph.reach(base, graph.children, None)
                sets.append(graph.reach(down, graph.parents, None))
                continue
            _, _, up, down = meaning
            found = set(base)
            if up != 0:
                found |= graph.reach(base, graph.parents, up)
            if down != 0:
                found |= graph.reach(base, graph.children, down)
            sets.append(found)
        selected |= set.intersection(*sets)
    rebuilt = graph.reach(selected, graph.children, None)
    models = [graph.nodes[u] for u in rebuilt if graph.nodes.get(u) is not None]
    models = [n for n in models if n.resource_type == "model"]
    if not models:
        return None
    return sorted({n.alias or n.name for n in models} & partitioned)


@pytest.fixture(scope="module")
def published_day(dbt_project, tmp_path_factory):
    """One day, landed and built, in a warehouse of this module's own."""
    folder = tmp_path_factory.mktemp("selection")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFILL_LANDING", str(folder / "landing"))
        patch.setenv("REFILL_WAREHOUSE", str(folder / "refill.duckdb"))
        write_day(folder / "landing", DAY, DaySpec(payments=20, parts=1))
        assert dbt_project.build(window_vars(DAY, DAY, "first")).success
        yield folder


def write_state(dbt_project, folder, modified: frozenset[str]):
    """A state manifest (DBT_STATE) in which `modified` models had other code."""
    state = dict(dbt_project.manifest.writable_manifest().to_dict())
    for node in state["nodes"].values():
        if node["resource_type"] == "model" and node["name"] in modified:
            node["raw_code"] += "\n-- as it was in the state being compared\n"
    (folder / "manifest.json").write_text(json.dumps(state))


@given(selection=selections())
def test_every_model_below_a_rebuilt_one_publishes_in_the_same_commit(
    dbt_project, published_day, selection
):
    text, terms, modified = selection
    state = published_day / "state" / "-".join(sorted(modified) or ["none"])
    state.mkdir(parents=True, exist_ok=True)
    write_state(dbt_project, state, modified)
    partitioned = set(dbt_project.partitioned_models())
    expected = oracle(Graph(dbt_project.manifest), terms, modified, partitioned)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DBT_STATE", str(state))
        try:
            resolved = dbt_project.resolve_selection(text)
        except UsageError as refused:
            # THEN a selection of no model (or not a selection) is refused in one line
            assert expected is None or "not a valid dbt selection" in str(refused), text
            assert "\n" not in str(refused)
            return
        assert resolved.models == expected, text
        # the data tests left out are the audits' twins of exactly the models rebuilt
        tests = {n.name for n in dbt_project.manifest.nodes.values() if n.resource_type == "test"}
        left_out = dbt_project._twins_of_built_models(resolved)
        assert set(left_out) == audits_twins_of(tests, expected), text
        if resolved.select in BUILT:
            return
        BUILT.add(resolved.select)

        # WHEN it is built, THEN every model it rebuilds publishes in one commit, no other
        run_id = f"selection-{next(RUNS)}"
        outcome = dbt_project.build(window_vars(DAY, DAY, run_id), resolved, include_seeds=False)
    assert outcome.success, (text, outcome.message)
    ran = {node.split(".")[2] for node in outcome.statuses if node.startswith("test.")}
    assert not ran & audits_twins_of(tests, expected), text
    # and whatever twins it leaves out, a chunk's build of it loads no seed (a `+` selector
    # reaches them; the flow loaded them once)
    assert not [node for node in outcome.statuses if node.startswith("seed.")], text
    rows = query(
        published_day / "refill.duckdb",
        "select model_name, published_at from ops.partition_ledger where run_id = ?",
        [run_id],
    )
    assert sorted(model for model, _ in rows) == expected, text
    assert len({published for _, published in rows}) <= 1, text
