"""What `refill ci` compares and reports: a pull request's published numbers against the
base branch's, on the same window and landing, as plain data.

The models compared are the partitioned ones (a `partition_column` in their config) that
both builds published; each is compared per day, and per key where the project declares
one (a versioned mart's `key`), on its row count and its declared measures (the facts'
`totals`, a versioned mart's `measures`). The SQL is refill.warehouse.code_change's, the
rendering refill.views.code_change_report's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

ROWS = "rows"  # every model's first measure: its row count per day (and key)


@dataclass(frozen=True)
class ComparedModel:
    """A published relation and what is compared of it."""

    relation: str  # the table dbt writes (a versioned model's <name>_v<n>)
    partition_column: str
    key_column: str | None  # the grain within a day, when the project declares one
    measures: tuple[str, ...]  # summed columns, after the row count


def compared_models(manifest_nodes: Mapping[str, Mapping]) -> dict[str, ComparedModel]:
    """Every partitioned model of a parsed project (manifest.json's `nodes`), by relation."""
    found: dict[str, ComparedModel] = {}
    for node in manifest_nodes.values():
        config = node.get("config") or {}
        partition_column = config.get("partition_column")
        if node.get("resource_type") != "model" or not partition_column:
            continue
        meta = {**(node.get("meta") or {}), **(config.get("meta") or {})}.get("refill") or {}
        if meta.get("role") == "versioned":
            key, measures = meta.get("key"), tuple(meta.get("measures") or ())
        elif meta.get("role") == "facts" and meta.get("totals"):
            key, measures = None, (meta["totals"],)
        else:
            key, measures = None, ()
        relation = node.get("alias") or node["name"]
        found[relation] = ComparedModel(relation, partition_column, key, measures)
    return found


@dataclass(frozen=True)
class Difference:
    """One number that the change moves: a measure of a model on a day (and key)."""

    day: date
    model: str
    key: str  # "" for a model compared per day only
    measure: str
    base: Decimal
    change: Decimal  # the pull request's value (named `change` after the ref it is built from)

    @property
    def delta(self) -> Decimal:
        return self.change - self.base


@dataclass
class CodeChangeReport:
    """The comparison of one pull request with its base, on one window."""

    base_ref: str
    base_commit: str
    head_commit: str
    start: date
    end: date
    compared: list[str] = field(default_factory=list)  # relations both builds published
    added: list[str] = field(default_factory=list)  # published by the pull request only
    removed: list[str] = field(default_factory=list)  # published by the base only
    differences: list[Difference] = field(default_factory=list)

    @property
    def days_changed(self) -> list[date]:
        return sorted({d.day for d in self.differences})

    @property
    def changes_numbers(self) -> bool:
        return bool(self.differences or self.added or self.removed)

    def moved(self) -> set[tuple[date, str, str]]:
        """(day, model, key) of every number the change moves."""
        return {(d.day, d.model, d.key) for d in self.differences}
