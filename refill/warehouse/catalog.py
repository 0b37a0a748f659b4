"""The catalog (refill.rules.catalog) read from the parsed dbt manifest: every model's
`meta: {refill: {...}}`, once per project."""

from __future__ import annotations

from pathlib import Path

from refill.rules.catalog import Catalog, catalog_of


def read_catalog(manifest) -> Catalog:
    """The datasets and versioned marts the project's models declare. A versioned model's
    versions carry one declaration: it is read once, under the model's name."""
    declared: dict[str, tuple[str, dict, str | None]] = {}
    for node in manifest.nodes.values():
        if node.resource_type != "model":
            continue
        meta = {**(node.meta or {}), **(node.config.get("meta") or {})}.get("refill")
        if meta:
            declared.setdefault(
                node.name, (node.name, dict(meta), node.config.get("partition_column"))
            )
    seeds = {
        node.name: {"id": node.unique_id, "file": str(seed_file(node))}
        for node in manifest.nodes.values()
        if node.resource_type == "seed"
    }
    return catalog_of([declared[name] for name in sorted(declared)], seeds)


def seed_file(node) -> Path:
    """A seed's CSV file, where dbt reads it (refill_seed_file in macros/ops/), absolute:
    the reference rule may open it in another process and folder (Spark's script
    transformation). root_path is the project dir as dbt was given it, which refill gives
    absolute; a relative one is this process's working directory's (refill_project_path
    is the dbt side's twin)."""
    return (Path(node.root_path) / node.original_file_path).absolute()
