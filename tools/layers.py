"""Measure the Python side's layering: import cycles, module sizes, and which modules
import the engines (duckdb, pyspark) and the orchestrator (prefect).

    python tools/layers.py [PACKAGE ...]        # default: every product package found

Prints one line per finding and a summary; exits 1 when a rule is broken, so CI can run it:
- every module sits in one of LAYERS and every import arrow points down the layers or
  within one (imports inside functions count: they are still arrows between modules, only
  deferred); a module in no layer is a finding too, so a new one is placed on purpose;
- no import cycle among the product's modules;
- no product module over MAX_LINES lines;
- only the modules in DUCKDB_HOMES import duckdb, only those in PYSPARK_HOMES import pyspark,
  only those in PREFECT_HOMES import prefect
  (both are prefixes; empty means "not checked", for measuring a layout before it has homes).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT_PACKAGES = ("refill", "flows")
MAX_LINES = 500
# Where the engine and the orchestrator may be imported (module-name prefixes).
DUCKDB_HOMES: tuple[str, ...] = ("refill.warehouse",)  # the one boundary to the engine
PYSPARK_HOMES: tuple[str, ...] = ("refill.warehouse",)  # the same boundary, on Spark
PREFECT_HOMES: tuple[str, ...] = ("flows",)  # the Prefect flows, tasks and artifacts

# The layers, bottom first: a module may import its own layer and the ones below it only.
# Each layer names modules, and packages as `package.*` (the package and every module in it).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # What every layer needs and that itself imports only from here: the package, the
    # error classes, settings, the code version and the signal handling.
    (
        "shared",
        ("refill", "refill.errors", "refill.settings", "refill.code_version", "refill.interrupts"),
    ),
    # Pure rules: no SQL, no engine, no orchestrator; the options' checks are rules on values.
    # The sample landing's writer sits with them: it writes the files the landing rules read
    # (rules.readiness's layout), through no SQL and no engine.
    ("rules", ("refill.rules.*", "refill.options", "refill.sample_data")),
    ("warehouse", ("refill.warehouse.*",)),
    ("views", ("refill.views.*",)),
    ("flows", ("flows.*",)),
    # The command line: it may import everything; the only layer above the flows.
    ("cli", ("refill.__main__", "refill.cli.*")),
)


def modules(packages: list[str]) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imports_of(path: Path) -> set[str]:
    """Every module name the file imports, at any depth (function bodies included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def internal_edges(found: dict[str, Path]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name, path in found.items():
        targets = set()
        for imported in imports_of(path):
            # `from refill.views import board` names refill.views.board: trim to a module
            while imported and imported not in found:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and not name.startswith(imported + "."):
                targets.add(imported)
        edges[name] = targets
    return edges


def layer_of(module: str) -> int | None:
    """The index in LAYERS of the layer that names the module or a package holding it."""
    for level, (_, names) in enumerate(LAYERS):
        for name in names:
            package = name.removesuffix(".*")
            if module == name or (package != name and f"{module}.".startswith(f"{package}.")):
                return level
    return None


def arrows_up(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import from a module to one in a higher layer."""
    return sorted(
        (source, target)
        for source, targets in edges.items()
        for target in targets
        if None not in (layer_of(source), layer_of(target)) and layer_of(target) > layer_of(source)
    )


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def importers(found: dict[str, Path], top_level: str) -> list[str]:
    return sorted(
        name
        for name, path in found.items()
        if any(i == top_level or i.startswith(top_level + ".") for i in imports_of(path))
    )


def main(argv: list[str]) -> int:
    packages = argv or [p for p in PRODUCT_PACKAGES if (ROOT / p).is_dir()]
    found = modules(packages)
    sizes = {name: len(path.read_text().splitlines()) for name, path in found.items()}
    edges = internal_edges(found)
    loops = cycles(edges)
    unplaced = sorted(name for name in found if layer_of(name) is None)
    upward = arrows_up(edges)
    oversized = sorted((n for n, s in sizes.items() if s > MAX_LINES), key=lambda n: -sizes[n])
    duckdb_users = importers(found, "duckdb")
    pyspark_users = importers(found, "pyspark")
    prefect_users = importers(found, "prefect")
    stray_duckdb = [m for m in duckdb_users if DUCKDB_HOMES and not m.startswith(DUCKDB_HOMES)]
    stray_pyspark = [m for m in pyspark_users if PYSPARK_HOMES and not m.startswith(PYSPARK_HOMES)]
    stray_prefect = [m for m in prefect_users if PREFECT_HOMES and not m.startswith(PREFECT_HOMES)]

    print(f"packages: {', '.join(packages)}: {len(found)} modules, {sum(sizes.values())} lines")
    for name in unplaced:
        print(f"in no layer: {name}")
    for source, target in upward:
        upper, lower = LAYERS[layer_of(target)][0], LAYERS[layer_of(source)][0]
        print(f"arrow up: {source} ({lower}) imports {target} ({upper})")
    for loop in loops:
        print(f"cycle: {' <-> '.join(loop)}")
    for name in oversized:
        print(f"over {MAX_LINES} lines: {name} ({sizes[name]})")
    print(f"import duckdb ({len(duckdb_users)}): {', '.join(duckdb_users) or '-'}")
    print(f"import pyspark ({len(pyspark_users)}): {', '.join(pyspark_users) or '-'}")
    print(f"import prefect ({len(prefect_users)}): {', '.join(prefect_users) or '-'}")
    print(
        f"summary: {len(upward)} arrow(s) up the layers, {len(unplaced)} module(s) in no layer, "
        f"{len(loops)} cycle(s), {len(oversized)} module(s) over {MAX_LINES} lines, "
        f"largest {max(sizes.values(), default=0)} lines, "
        f"{len(duckdb_users)} importing duckdb ({len(stray_duckdb)} outside its home), "
        f"{len(pyspark_users)} importing pyspark ({len(stray_pyspark)} outside its home), "
        f"{len(prefect_users)} importing prefect ({len(stray_prefect)} outside its home)"
    )
    broken = upward or unplaced or loops or oversized
    return 1 if broken or stray_duckdb or stray_pyspark or stray_prefect else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
