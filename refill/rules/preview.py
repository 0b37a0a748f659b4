"""A restatement preview's decisions, without I/O: its id, its record, whether it may still
be published (nothing it depends on changed), and its report (per day and model old vs
new for every declared measure, per value of a versioned model's key, the summary, the days
that changed outside --expect-change).

The preview itself (`refill backfill ... --preview`) writes and audits every chunk as a
real run does and keeps it under the preview's id instead of publishing it
(macros/wap/refill_keep_preview.sql); `--from-preview ID` publishes what was kept
(flows/preview.py) iff `what_changed` finds nothing.

`what_changed` is the one answer to "may this preview (or this chunk of it) be published
now". The flow asks it before the run starts (a refusal in one line, nothing begun), and the
publish itself asks it for each chunk at the moment it writes, inside the dbt operation that
publishes (macros/wap/refill_publish_preview.sql, through the plugin's SQL function
`refill_preview_refusal`): under refill's warehouse lock, and with the warehouse file held by
that one process when a user runs the operation by hand.
"""

from __future__ import annotations

import re
import secrets
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from decimal import Decimal

from refill.errors import RefillError
from refill.rules import planning
from refill.rules.reference import changed_seeds

# `p` and 12 lowercase hex digits: it becomes part of relation names (schema `preview`),
# so it is checked here and in macros/wap/refill_preview_id.sql, never pasted unchecked.
PREVIEW_ID = re.compile(r"p[0-9a-f]{12}")
LARGEST_CHANGES = 10  # the summary's largest changes (day, model, key, measure)


def new_preview_id() -> str:
    return "p" + secrets.token_hex(6)


def checked_preview_id(raw: str) -> str:
    if not PREVIEW_ID.fullmatch(raw or ""):
        raise RefillError(
            f"{raw!r} is not a preview id (p and 12 hex digits, as `--preview` printed it)"
        )
    return raw


def checked_sign_off(confirm: bool | str, preview: bool) -> bool | str:
    """The backfill flow's `confirm` as a deployment (or `--from-preview`) passes it: the
    --yes sign-off (a bool), or the id of the preview it publishes, checked before the flow
    plans. A preview and a publish of one are two runs: never both in one."""
    if not isinstance(confirm, str):
        return confirm
    if preview:
        raise RefillError(
            f"confirm {confirm!r} publishes a preview and preview: true makes one; "
            "run the preview first, then publish it with confirm: <its id>"
        )
    return checked_preview_id(confirm)


def parse_expected_range(raw: str | None) -> planning.DateRange | None:
    """--expect-change START..END (inclusive), or None when not given."""
    if not raw:
        return None
    start, separator, end = raw.partition("..")
    if not separator:
        raise RefillError(f"--expect-change {raw!r}: give START..END, e.g. 2025-01-01..2025-06-30")
    return planning.parse_range(start.strip(), end.strip())


# What a day of a model was, published, when the preview ran: (run_id, code_version), or
# None when it was not published. Keyed "model|YYYY-MM-DD" (JSON keys are strings).
PublishedState = dict[str, list[str] | None]


def state_key(model: str, day: date) -> str:
    return f"{model}|{day.isoformat()}"


@dataclass(frozen=True)
class PreviewRecord:
    """What a preview kept, and what it depends on (ops.refill_previews)."""

    preview_id: str
    run_id: str
    created_at: datetime
    expires_at: datetime
    start: date
    end: date
    models: list[str]
    chunks: list[tuple[date, date]]  # the plan's chunks, in the order they were built
    code_versions: dict[str, str]  # model -> the code version it was computed with
    fingerprints: dict[str, str]  # "model|day" -> the source fingerprint it was built from
    published: PublishedState  # "model|day" -> the published state at preview time
    select: str | None = None
    # "model|day" -> the reference fingerprint (what the day read of the seeds) it was built from
    references: dict[str, str] = field(default_factory=dict)
    datasets: list[str] = field(default_factory=list)  # the landing datasets it was built from
    # the chunks a publish of it has committed so far (a publish stopped between chunks
    # resumes with the others)
    published_chunks: list[tuple[date, date]] = field(default_factory=list)

    @property
    def remaining_chunks(self) -> list[tuple[date, date]]:
        done = set(self.published_chunks)
        return [chunk for chunk in self.chunks if chunk not in done]


def what_changed(
    record: PreviewRecord,
    *,
    now: datetime,
    code_versions: Mapping[str, str],
    current_fingerprints: Mapping[date, set[str]],
    published: PublishedState,
    current_references: Mapping[date, list[str]],
    chunk: tuple[date, date] | None = None,
) -> str | None:
    """None when the preview may be published as kept (with `chunk`: that chunk of it, now);
    else one line naming what changed (the day and model where it is about one). Checked in
    this order: the chunk (one of the preview's, not published yet), expiry, code, the
    landing (a re-export), the seed rows a day reads (current_references: the day's
    reference fingerprints now, refill.rules.reference), the published state (a run
    published one of its days), over every day still to publish (all its chunks but those
    a publish of it committed): a change to any of them stops the publish before its next
    chunk, not after it."""
    if chunk is not None:
        start, end = chunk
        if chunk not in record.chunks:
            chunks = ", ".join(str(planning.Chunk(*each)) for each in record.chunks)
            return (
                f"{planning.Chunk(start, end)} is not a chunk of preview {record.preview_id} "
                f"(its chunks: {chunks}); a publish of another window would replace days the "
                "preview did not build"
            )
        if chunk in record.published_chunks:
            return f"chunk {planning.Chunk(start, end)} of preview {record.preview_id} is published"
    days = [day for each in record.remaining_chunks for day in planning.Chunk(*each).days]
    if now >= record.expires_at:
        return f"preview {record.preview_id} expired at {record.expires_at:%Y-%m-%d %H:%M} UTC"
    if not record.datasets:
        return (
            f"preview {record.preview_id} was recorded by an earlier refill, without the "
            "datasets it was built from"
        )
    for model in record.models:
        kept, current = record.code_versions.get(model), code_versions.get(model)
        if kept != current:
            return (
                f"the code of {model} changed since preview {record.preview_id} "
                f"(code version {kept} then, {current} now)"
            )
    wanted = {day.isoformat() for day in days}
    for key, fingerprint in sorted(record.fingerprints.items()):
        model, day = key.split("|")
        if day in wanted and fingerprint not in current_fingerprints.get(
            date.fromisoformat(day), set()
        ):
            return (
                f"day {day} was re-exported since preview {record.preview_id} "
                f"(its landing fingerprint is not the one {model} was computed from)"
            )
    for key, kept in sorted(record.references.items()):
        model, day = key.split("|")
        if day not in wanted:
            continue
        now = current_references.get(date.fromisoformat(day), [])
        if kept not in now:
            seeds = ", ".join(changed_seeds(kept, now[0] if now else None)) or "its reference data"
            return (
                f"{seeds} changed for day {day} since preview {record.preview_id} "
                f"(not the rows {model} was computed from)"
            )
    return published_state_changed(record, published, days)


def selection_refused(record: PreviewRecord, given: str | None, models: list[str]) -> str | None:
    """A publish of a preview publishes the models the preview kept, all of them: a --select
    that resolves to other models is refused (None when it is absent or the same set)."""
    if given is None or sorted(models) == sorted(record.models):
        return None
    return (
        f"--select {given!r} rebuilds {', '.join(sorted(models))}, but preview "
        f"{record.preview_id} kept {', '.join(record.models)}: a publish of it publishes what "
        "it kept; drop --select, or preview that selection"
    )


def published_state_changed(
    record: PreviewRecord, published: PublishedState, days: Iterable[date] | None = None
) -> str | None:
    """None when every model-day (of `days`, default all) is published as it was when the
    preview ran; else one line naming the first that is not."""
    keys = set(record.published) | set(published)
    if days is not None:
        wanted = {day.isoformat() for day in days}
        keys = {key for key in keys if key.split("|")[1] in wanted}
    for key in sorted(keys):
        then, now_state = record.published.get(key), published.get(key)
        if then != now_state:
            model, day = key.split("|")
            who = f"run {now_state[0]}" if now_state else "a run that removed it"
            return (
                f"day {day} of {model} was published by {who} since preview "
                f"{record.preview_id} (it was {then[0] if then else 'not published'} then)"
            )
    return None


# -- the report ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One day of one model and one of its declared measures (and one value of its key,
    for a keyed model's per-key change: key "" for the whole model): published now vs kept
    by the preview. A model that declares no measure has one change per day, measure "":
    its rows alone compare."""

    day: date
    model: str
    key: str
    measure: str
    old_rows: int
    new_rows: int
    old_amount: Decimal
    new_amount: Decimal

    @property
    def amount_change(self) -> Decimal:
        return self.new_amount - self.old_amount

    @property
    def changed(self) -> bool:
        return self.old_rows != self.new_rows or self.old_amount != self.new_amount


@dataclass(frozen=True)
class KeyedModel:
    """A versioned model whose changes are also reported per value of its declared key."""

    name: str  # the versioned model; its versions' kept relations are <name>_v<n>
    key_column: str  # its `key`, the name its per-key sections are headed by


@dataclass(frozen=True)
class MonthTotal:
    """One month of a keyed model, one key value and one measure: old and new summed."""

    model: str
    month: str  # YYYY-MM
    key: str
    measure: str
    old: Decimal
    new: Decimal

    @property
    def change(self) -> Decimal:
        return self.new - self.old


@dataclass
class PreviewReport:
    preview_id: str
    start: date
    end: date
    days: list[Change] = field(default_factory=list)  # per day, model and measure
    by_key: list[Change] = field(default_factory=list)  # per day, keyed model, key, measure
    keyed: dict[str, KeyedModel] = field(default_factory=dict)  # kept model -> its keyed model
    expected: planning.DateRange | None = None
    facts_model: str = ""  # the primary dataset's facts: the page's row per day

    @property
    def measures(self) -> list[str]:
        """Every measure compared, in the order the report first meets it."""
        return list(dict.fromkeys(c.measure for c in self.days + self.by_key if c.measure))

    @property
    def days_changed(self) -> list[date]:
        return sorted({c.day for c in self.days if c.changed})

    @property
    def days_unchanged(self) -> list[date]:
        changed = set(self.days_changed)
        return sorted({c.day for c in self.days} - changed)

    @property
    def unexpected(self) -> list[date]:
        """Days that change outside --expect-change (none when it was not given)."""
        if self.expected is None:
            return []
        window = self.expected
        return [day for day in self.days_changed if not window.start <= day <= window.end]

    def largest(self) -> list[Change]:
        changes = [c for c in self.by_key or self.days if c.changed]
        changes.sort(key=lambda c: (-abs(c.amount_change), c.day, c.model, c.key, c.measure))
        return changes[:LARGEST_CHANGES]

    def keyed_models(self) -> list[KeyedModel]:
        return sorted(set(self.keyed.values()), key=lambda keyed: keyed.name)

    def by_key_of(self, keyed: KeyedModel) -> list[Change]:
        """The per-key changes of `keyed`'s versions."""
        return [c for c in self.by_key if self.keyed.get(c.model) == keyed]

    def totals_by_key_and_month(self, keyed: KeyedModel) -> list[MonthTotal]:
        """Per month, key value and measure, old and new summed over `keyed`'s first
        version kept (one version, so a total is not counted once per version)."""
        changes = self.by_key_of(keyed)
        if not changes:
            return []
        model = min(c.model for c in changes)
        sums: dict[tuple[str, str, str], list[Decimal]] = defaultdict(lambda: [Decimal(0)] * 2)
        for c in changes:
            if c.model == model:
                pair = sums[(c.day.strftime("%Y-%m"), c.key, c.measure)]
                pair[0] += c.old_amount
                pair[1] += c.new_amount
        return [
            MonthTotal(keyed.name, month, key, measure, old, new)
            for (month, key, measure), (old, new) in sorted(sums.items())
        ]

    def as_json(self) -> dict:
        def rows(changes: Iterable[Change]) -> list[dict]:
            return [
                {**asdict(c), "day": c.day.isoformat(), "amount_change": c.amount_change}
                for c in changes
            ]

        return {
            "preview_id": self.preview_id,
            "start": self.start.isoformat(),
            "end": self.end.isoformat(),
            "measures": self.measures,
            "expected": str(self.expected) if self.expected else None,
            "days_changed": [d.isoformat() for d in self.days_changed],
            "days_unchanged": [d.isoformat() for d in self.days_unchanged],
            "unexpected": [d.isoformat() for d in self.unexpected],
            "days": rows(self.days),
            "keys": {model: keyed.key_column for model, keyed in sorted(self.keyed.items())},
            "by_key": rows(self.by_key),
            "largest": rows(self.largest()),
            "by_key_and_month": [
                {**asdict(total), "change": total.change}
                for keyed in self.keyed_models()
                for total in self.totals_by_key_and_month(keyed)
            ],
        }
