"""What the dbt project declares about its datasets, as plain data (read from the models'
`meta: {refill: ...}` by refill.warehouse.catalog). Pure: the Python side names no dataset
and no model; a second landing dataset is SQL and YAML only.

A model joins the catalog with `config: {meta: {refill: {...}}}` in its YAML:
- `dataset: <landing folder>, role: facts, totals: <column>, hours: <timestamp column>`: the
  dataset's facts (the rows a chunk reports and a sign-off shows; `totals`, optional, is
  summed in the sign-off and compared by a preview, `hours` counted per hour for the hour
  holes); with `reference: [...]`, what the dataset's days read of the seeds
  (refill.rules.reference): an input of each day; `primary: true` marks the dataset whose
  facts status, the board and a daily run's message show (default: the first by name);
- `dataset: <landing folder>, role: quarantine`: its rejected lines (status's quarantined);
- `role: versioned, key: <column>, measures: [...], upstream: <model>`: a versioned mart
  refill can cut over (`key`, optional, is its grain within a day).

Every word refill shows about a dataset (the totals' column, a key's name) is a name
declared here: the framework names no dataset, column or unit of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from refill.errors import RefillError
from refill.rules.reference import ReferenceRead, datasets_fingerprints, parse_reads


@dataclass(frozen=True)
class Dataset:
    """One landing dataset (`<landing>/<name>/dt=YYYY-MM-DD/`) and the models built from it."""

    name: str
    facts_model: str
    partition_column: str  # the facts' day column
    totals_column: str | None = None  # the facts' column summed per day; none: rows only
    hours_column: str | None = None
    quarantine_model: str | None = None
    primary: bool = False  # the dataset status's and the board's main columns show
    reference: tuple[ReferenceRead, ...] = ()  # the seed rows each day reads

    def describe_totals(self, rows: int, total: float) -> str:
        """A day's published facts in the declaration's words: "956 rows, amount_usd
        952,635.00", or "956 rows" for a dataset that declares no totals."""
        described = f"{rows} row" if rows == 1 else f"{rows} rows"
        if self.totals_column is not None:
            described += f", {self.totals_column} {total:,.2f}"
        return described


@dataclass(frozen=True)
class DayTotals:
    """What readers see of one dataset's facts on one day now (a restatement changes it)."""

    dataset: Dataset
    rows: int = 0
    total: float = 0.0

    def describe(self) -> str:
        return self.dataset.describe_totals(self.rows, self.total)


def describe_day_totals(totals: Sequence[DayTotals]) -> str:
    """A day's published facts over the datasets a command builds, each in its own words;
    a dataset is named when there are several (one is the command's only subject)."""
    if len(totals) == 1:
        return totals[0].describe()
    return "; ".join(f"{t.dataset.name}: {t.describe()}" for t in totals)


@dataclass(frozen=True)
class VersionedModel:
    """A versioned model refill can cut over: its grain and what the report compares."""

    name: str
    partition_column: str
    key_column: str | None  # the grain within a partition; None: one row per partition
    measures: tuple[str, ...]  # compared in the report; the first is the headline
    upstream: str  # the model its versions reconcile with

    def relation_name(self, version: int) -> str:
        """The table dbt writes for a version (dbt's default alias, <name>_v<n>)."""
        return f"{self.name}_v{version}"


@dataclass(frozen=True)
class Catalog:
    """Every dataset, the primary one first, then by name; and the versioned marts."""

    datasets: tuple[Dataset, ...]
    versioned: tuple[VersionedModel, ...] = ()

    def __post_init__(self) -> None:
        if not self.datasets:
            raise RefillError(
                "the dbt project declares no dataset: give a facts model "
                "`meta: {refill: {dataset: ..., role: facts}}`"
            )

    @property
    def primary(self) -> Dataset:
        """The dataset marked `primary: true`, else the first by name: whose facts status's
        and the board's main columns and a daily run's message show."""
        return self.datasets[0]

    def built_by(self, models: Sequence[str]) -> tuple[Dataset, ...]:
        """The datasets whose facts are among `models` (a command's selection; every
        dataset when it selects nothing): whose published totals it may restate."""
        return tuple(d for d in self.datasets if not models or d.facts_model in models)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(dataset.name for dataset in self.datasets)

    def reference_fingerprints(self, start: date, end: date) -> dict[date, list[str]]:
        """Each day's reference fingerprint now, one per dataset in catalog order, from the
        seed files (refill.rules.reference; "" for a dataset that declares none)."""
        return datasets_fingerprints([dataset.reference for dataset in self.datasets], start, end)


def catalog_of(
    models: list[tuple[str, dict, str | None]],
    seeds: Mapping[str, Mapping[str, str]] | None = None,
) -> Catalog:
    """The catalog from (model name, its `meta.refill`, its partition_column) triples, and
    the project's seeds (name -> its `id` and `file`) the datasets' references name."""
    datasets: dict[str, dict] = {}
    quarantines: dict[str, str] = {}
    versioned: dict[str, VersionedModel] = {}
    for name, meta, partition_column in models:
        role = meta.get("role")
        if role == "facts":
            datasets[_required(meta, "dataset", name)] = {
                "model": name,
                "meta": meta,
                "partition_column": partition_column or _required(meta, "partition_column", name),
            }
        elif role == "quarantine":
            quarantines[_required(meta, "dataset", name)] = name
        elif role == "versioned":
            versioned[name] = VersionedModel(
                name=name,
                partition_column=partition_column or _required(meta, "partition_column", name),
                key_column=meta.get("key") or None,
                measures=tuple(_required(meta, "measures", name)),
                upstream=_required(meta, "upstream", name),
            )
        elif role is not None:
            raise RefillError(
                f"model {name}: meta.refill.role {role!r} is not facts, quarantine or versioned"
            )
    for dataset in quarantines:
        if dataset not in datasets:
            raise RefillError(
                f"model {quarantines[dataset]}: dataset {dataset!r} has no facts model"
            )
    found = [
        Dataset(
            name=dataset,
            facts_model=entry["model"],
            partition_column=entry["partition_column"],
            totals_column=entry["meta"].get("totals") or None,
            hours_column=entry["meta"].get("hours"),
            quarantine_model=quarantines.get(dataset),
            primary=bool(entry["meta"].get("primary", False)),
            reference=parse_reads(entry["meta"].get("reference"), seeds or {}, entry["model"]),
        )
        for dataset, entry in datasets.items()
    ]
    found.sort(key=lambda dataset: (not dataset.primary, dataset.name))
    return Catalog(tuple(found), tuple(versioned[name] for name in sorted(versioned)))


def chunk_rows_model(catalog: Catalog, models: list[str]) -> str:
    """Whose ledger rows a backfill's chunk reports as its rows: the first dataset's facts
    among the selected models (every model when none is selected), else the first one."""
    for dataset in catalog.datasets:
        if not models or dataset.facts_model in models:
            return dataset.facts_model
    return models[0]


def _required(meta: dict, key: str, model: str):
    if meta.get(key) in (None, "", []):
        raise RefillError(
            f"model {model}: meta.refill.{key} is required for role {meta.get('role')}"
        )
    return meta[key]
