"""Pure decisions of a backfill: the range, each day's state and its reason, the chunks and
their order (the plan that puts them together: refill/rules/plan.py).

No warehouse, no dbt, no clock: everything here is a function of its arguments,
unit-tested on its own. The flows gather the facts and call these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum

from refill.errors import UsageError
from refill.rules.reference import changed_seeds

ORDERS = ("newest-first", "oldest-first")
ON_MISSING = ("fail", "skip", "wait")


class DayState(StrEnum):
    """What a day needs, from the ledger, the attempts and the landing."""

    PUBLISHED = "published"  # every model published with the current code and source
    MISSING = "missing"  # some model has never published the day
    FAILED = "failed"  # the latest attempt failed after the last publish
    STALE = "stale"  # published, but the source was re-exported, its rates or code changed
    NOT_READY = "not ready"  # the landing is not complete: nothing can be built yet


NEEDS_WORK = (DayState.MISSING, DayState.FAILED, DayState.STALE)


@dataclass(frozen=True)
class DateRange:
    start: date
    end: date

    @property
    def days(self) -> list[date]:
        return [self.start + timedelta(days=n) for n in range((self.end - self.start).days + 1)]

    def __str__(self) -> str:
        return f"{self.start}..{self.end}"


@dataclass(frozen=True)
class Chunk:
    """Consecutive days built by one dbt invocation (one window)."""

    start: date
    end: date

    @property
    def days(self) -> list[date]:
        return DateRange(self.start, self.end).days

    def __str__(self) -> str:
        return str(self.start) if self.start == self.end else f"{self.start}..{self.end}"


def parse_day(name: str, raw: str | date | None) -> date:
    """An ISO date from the command line or a deployment parameter (a bad one is a usage
    error, as every value refused here: exit 2)."""
    if isinstance(raw, date):
        return raw
    if raw is None or str(raw).strip() == "":
        raise UsageError(f"--{name} is required (an ISO date, YYYY-MM-DD); there is no default")
    try:
        return date.fromisoformat(str(raw).strip())
    except ValueError:
        raise UsageError(f"--{name} {raw!r} is not an ISO date (YYYY-MM-DD)") from None


def parse_range(start: str | date | None, end: str | date | None) -> DateRange:
    """An explicit, inclusive range: a backfill has no default."""
    if start is None and end is None:
        raise UsageError("a backfill needs an explicit range: --start YYYY-MM-DD --end YYYY-MM-DD")
    first, last = parse_day("start", start), parse_day("end", end)
    if last < first:
        raise UsageError(f"--end {last} is before --start {first}")
    return DateRange(first, last)


@dataclass(frozen=True)
class DayVerdict:
    """A day's state with what made it so (`day_verdict`).

    source_changed: a model published the day from another source export;
    reference_changed: the seeds whose rows the day reads changed since a model published
    it (refill.rules.reference);
    code_changed: (model, published code version, current code version) per model whose
    code changed since it published the day; missing_models: models that never published it.
    """

    state: DayState
    source_changed: bool = False
    code_changed: tuple[tuple[str, str, str], ...] = ()
    missing_models: tuple[str, ...] = ()
    reference_changed: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        """Why the day is in its state, in a few words (for STALE: what changed)."""
        if self.state == DayState.STALE:
            reasons = ["the source was re-exported after it was published"] * self.source_changed
            if self.reference_changed:
                reasons.append(f"{', '.join(self.reference_changed)} changed for this day")
            reasons += [
                f"{model}'s code changed ({published} -> {current})"
                for model, published, current in self.code_changed
            ]
            return "; ".join(reasons)
        if self.state == DayState.MISSING:
            return "never published by " + ", ".join(self.missing_models)
        return _STATE_REASONS[self.state]


_STATE_REASONS = {
    DayState.NOT_READY: "the landing is not complete",
    DayState.FAILED: "the latest attempt failed after the last publish",
    DayState.PUBLISHED: "published from this source with this code",
}


def day_verdict(
    *,
    is_ready: bool,
    published: dict[str, tuple[str, str | None, str | None]],
    models: Sequence[str],
    current_code_versions: dict[str, str],
    source_fingerprint: str | None,
    last_attempt_failed: bool,
    reference_fingerprint: str | None = None,
) -> DayVerdict:
    """The state of one day across `models` and its reason, the first state that applies:

    NOT_READY  the landing is incomplete: nothing can be built (published rows stay);
    STALE      a model published it from another source export, other reference rows (the
               seed rows the day reads) or other code: rebuilding changes published
               numbers, so it needs sign-off;
    FAILED     the latest attempt failed after the last publish;
    MISSING    some model never published it;
    PUBLISHED  every model published it from this source with this code.

    published: model -> (code_version, source_fingerprint, reference_fingerprint) of its
    ledger row for the day; reference_fingerprint: the day's now ("" when it reads none).
    """
    if not is_ready:
        return DayVerdict(DayState.NOT_READY)
    source_changed = False
    code_changed = []
    reference_changed: set[str] = set()
    for model in models:
        if model not in published:
            continue
        code_version, fingerprint, reference = published[model]
        current = current_code_versions.get(model, code_version)
        if code_version != current:
            code_changed.append((model, code_version, current))
        source_changed = source_changed or fingerprint != source_fingerprint
        reference_changed.update(changed_seeds(reference, reference_fingerprint))
    if source_changed or code_changed or reference_changed:
        return DayVerdict(
            DayState.STALE,
            source_changed,
            tuple(code_changed),
            reference_changed=tuple(sorted(reference_changed)),
        )
    if last_attempt_failed:
        return DayVerdict(DayState.FAILED)
    missing = tuple(model for model in models if model not in published)
    if missing:
        return DayVerdict(DayState.MISSING, missing_models=missing)
    return DayVerdict(DayState.PUBLISHED)


def days_to_build(states: dict[date, DayState], restate: bool) -> list[date]:
    """Missing, failed and stale days; published ones too when restating."""
    wanted = set(NEEDS_WORK) | ({DayState.PUBLISHED} if restate else set())
    return sorted(day for day, state in states.items() if state in wanted)


def plan_chunks(
    days: Iterable[date],
    chunk_days: int,
    order: str,
    *,
    lines: Mapping[date, int] | None = None,
    chunk_lines: int | None = None,
) -> list[Chunk]:
    """Cut days into windows of consecutive days, in `order`.

    A chunk holds at most `chunk_days` days and, when `chunk_lines` is given, at most
    that many landed lines (`lines`: the day's manifest records), so a chunk's memory
    follows its data, not the calendar; a day above the limit gets a chunk of its own.
    A chunk never spans a day that is not in `days`: a window is a range, and a
    published day inside it would be rewritten for nothing.
    """
    chunks: list[Chunk] = []
    run: list[date] = []
    for day in sorted(set(days)):
        if run and (day - run[-1]).days != 1:
            chunks += _cut(run, chunk_days, lines or {}, chunk_lines)
            run = []
        run.append(day)
    chunks += _cut(run, chunk_days, lines or {}, chunk_lines)
    return list(reversed(chunks)) if order == "newest-first" else chunks


def _cut(
    run: list[date], chunk_days: int, lines: Mapping[date, int], chunk_lines: int | None
) -> list[Chunk]:
    chunks: list[Chunk] = []
    first, held = 0, 0
    for index, day in enumerate(run):
        landed = lines.get(day) or 0
        full = index - first >= chunk_days or (chunk_lines and held + landed > chunk_lines)
        if index > first and full:
            chunks.append(Chunk(run[first], run[index - 1]))
            first, held = index, 0
        held += landed
    if run:
        chunks.append(Chunk(run[first], run[-1]))
    return chunks


def effective_concurrency(
    requested: int, concurrent_writers: bool, engine_name: str
) -> tuple[int, str | None]:
    """How many chunks run at once, and the one line that says so when it is not what was
    asked. An engine whose warehouse admits one writing process (DuckDB: one process writes
    the file) runs chunks one at a time (the flows record both numbers in the run log); one
    with concurrent writers (Spark) runs up to `requested` (refill.warehouse.engine)."""
    if not concurrent_writers and requested > 1:
        if engine_name == "duckdb":
            return 1, (
                f"--max-concurrency {requested}: DuckDB runs one chunk at a time (one process "
                "writes the file, and DuckDB uses every core inside each chunk)"
            )
        return 1, f"--max-concurrency {requested}: {engine_name} admits one writer at a time"
    return requested, None
