"""Which chunk of a backfill may start now, when several run at once: the one home of the rule.

A chunk starts only when (1) fewer than `limit` chunks are writing (the warehouse's slots:
the run's --max-concurrency, itself under the engine's concurrency and the named global
limit shared by every backfill), (2) it shares no day with a chunk still running (the chunks
of one plan are disjoint, but a chunk rebuilt after a failure or a late day may meet one),
and (3) no live run (a daily run) is waiting for the warehouse: live data first, as the
warehouse lock orders it (refill.warehouse.locking). Among the chunks that may start, the
plan's order wins (newest-first by default). Pure: no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from refill.rules.planning import Chunk


def overlaps(first: Chunk, second: Chunk) -> bool:
    """Whether two chunks share a day (chunks are ranges of consecutive days)."""
    return first.start <= second.end and second.start <= first.end


def next_to_start(
    pending: Sequence[Chunk],
    running: Collection[Chunk],
    limit: int,
    *,
    live_waiting: bool = False,
) -> Chunk | None:
    """The first chunk of `pending` (in plan order) that may start now, or None."""
    if limit < 1:
        raise ValueError(f"the concurrency limit must be at least 1, not {limit}")
    if live_waiting or len(running) >= limit:
        return None
    for chunk in pending:
        if not any(overlaps(chunk, other) for other in running):
            return chunk
    return None


def startable(
    pending: Sequence[Chunk],
    running: Collection[Chunk],
    limit: int,
    *,
    live_waiting: bool = False,
) -> list[Chunk]:
    """Every chunk that may start now, in the order they would start (filling free slots)."""
    started: list[Chunk] = []
    left = list(pending)
    while True:
        chunk = next_to_start(left, [*running, *started], limit, live_waiting=live_waiting)
        if chunk is None:
            return started
        started.append(chunk)
        left.remove(chunk)
