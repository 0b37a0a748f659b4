"""The pure decisions: ranges, day states, chunks and their order, readiness, locks."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import date, timedelta

import pytest

from refill import options
from refill.errors import RefillError
from refill.rules import planning, readiness
from refill.rules.planning import Chunk, DayState
from refill.sample_data import DATASET, DaySpec, write_day
from refill.views.status import find_hour_holes

D = date(2026, 3, 1)


def days(*offsets: int) -> list[date]:
    return [D + timedelta(days=n) for n in offsets]


@pytest.mark.parametrize(
    "start, end, message",
    [
        (None, None, "needs an explicit range"),
        ("2026-03-01", None, "--end is required"),
        ("2026-03-05", "2026-03-01", "--end 2026-03-01 is before --start 2026-03-05"),
        ("2026/03/01", "2026-03-02", "is not an ISO date"),
        ("2026-02-30", "2026-03-02", "is not an ISO date"),
    ],
)
def test_a_range_must_be_explicit_and_valid(start, end, message):
    with pytest.raises(RefillError, match=message):
        planning.parse_range(start, end)


def test_a_range_is_inclusive():
    assert planning.parse_range("2026-03-01", "2026-03-03").days == days(0, 1, 2)


@pytest.mark.parametrize(
    "order, chunk_days, concurrency, on_missing, message",
    [
        ("sideways", 7, 1, "fail", "--order 'sideways'"),
        ("newest-first", 0, 1, "fail", "--chunk-days must be"),
        ("newest-first", 7, 0, "fail", "--max-concurrency must be"),
        ("newest-first", 7, 1, "ignore", "--on-missing 'ignore'"),
    ],
)
def test_bad_options_are_refused(order, chunk_days, concurrency, on_missing, message):
    values = {"order": order, "chunk_days": chunk_days, "max_concurrency": concurrency}
    with pytest.raises(RefillError, match=message):
        options.check({**values, "on_missing": on_missing})


def test_a_negative_line_limit_is_refused():
    with pytest.raises(RefillError, match="--chunk-lines must be"):
        options.check({"chunk_lines": -1})


def test_chunks_cover_the_days_in_order_and_never_span_a_gap():
    todo = days(0, 1, 2, 3, 4, 7, 8)

    newest = planning.plan_chunks(todo, 2, "newest-first")
    oldest = planning.plan_chunks(todo, 2, "oldest-first")

    assert oldest == [
        Chunk(D, D + timedelta(1)),
        Chunk(D + timedelta(2), D + timedelta(3)),
        Chunk(D + timedelta(4), D + timedelta(4)),
        Chunk(D + timedelta(7), D + timedelta(8)),
    ]
    assert newest == list(reversed(oldest))
    assert sorted(d for chunk in newest for d in chunk.days) == todo


def test_chunks_are_cut_by_landed_lines_within_the_day_limit():
    todo = days(0, 1, 2, 3, 4, 5)
    lines = dict(zip(todo, [300, 300, 400, 2000, 100, 100], strict=True))

    chunks = planning.plan_chunks(todo, 3, "oldest-first", lines=lines, chunk_lines=1000)

    # a chunk closes before it would exceed 1,000 lines (or 3 days); a day above the
    # limit is built alone rather than refused
    assert chunks == [
        Chunk(D, D + timedelta(2)),
        Chunk(D + timedelta(3), D + timedelta(3)),
        Chunk(D + timedelta(4), D + timedelta(5)),
    ]
    assert planning.plan_chunks(todo, 3, "oldest-first", lines=lines, chunk_lines=0) == [
        Chunk(D, D + timedelta(2)),
        Chunk(D + timedelta(3), D + timedelta(5)),
    ]


FACTS = {
    "is_ready": True,
    "published": {"a": ("v1", "fp1", "fx:r1,mk:m1"), "b": ("v1", "fp1", "fx:r1,mk:m1")},
    "models": ["a", "b"],
    "current_code_versions": {"a": "v1", "b": "v1"},
    "source_fingerprint": "fp1",
    "last_attempt_failed": False,
    "reference_fingerprint": "fx:r1,mk:m1",
}


def state(**overrides) -> DayState:
    return planning.day_verdict(**{**FACTS, **overrides}).state


def verdict(**overrides) -> planning.DayVerdict:
    return planning.day_verdict(**{**FACTS, **overrides})


def test_day_states():
    assert state() == DayState.PUBLISHED
    assert state(published={"a": ("v1", "fp1", "fx:r1,mk:m1")}) == DayState.MISSING
    assert state(source_fingerprint="fp2") == DayState.STALE
    assert state(current_code_versions={"a": "v2", "b": "v1"}) == DayState.STALE
    assert state(reference_fingerprint="fx:r2,mk:m1") == DayState.STALE
    assert state(last_attempt_failed=True) == DayState.FAILED
    assert state(published={}, last_attempt_failed=True) == DayState.FAILED
    assert state(is_ready=False) == DayState.NOT_READY


def test_a_stale_day_says_what_changed():
    # GIVEN a day re-exported after it was published, and one model's code changed
    stale = verdict(source_fingerprint="fp2", current_code_versions={"a": "v2", "b": "v1"})

    # THEN its verdict names both, for the board and the status to show as they are
    assert stale.state == DayState.STALE
    assert stale.source_changed and stale.code_changed == (("a", "v1", "v2"),)
    assert stale.reason == (
        "the source was re-exported after it was published; a's code changed (v1 -> v2)"
    )
    assert verdict(current_code_versions={"a": "v1", "b": "v3"}).reason == (
        "b's code changed (v1 -> v3)"
    )
    assert verdict(source_fingerprint="fp2").reason == (
        "the source was re-exported after it was published"
    )


def test_a_day_whose_seed_rows_changed_is_stale_naming_the_seed():
    # GIVEN a day whose fx rows changed since it was published (its code and landing did not)
    stale = verdict(reference_fingerprint="fx:r2,mk:m1")

    # THEN it is stale because of that seed, and says so
    assert stale.state == DayState.STALE and stale.reference_changed == ("fx",)
    assert not stale.source_changed and not stale.code_changed
    assert stale.reason == "fx changed for this day"
    # AND a seed read for the first time, or both, are named too
    assert verdict(reference_fingerprint="fx:r2,mk:m2,new:n1").reason == (
        "fx, mk, new changed for this day"
    )
    # AND a dataset that reads no seed ("") is current with rows that recorded none
    unrecorded = {"a": ("v1", "fp1", None), "b": ("v1", "fp1", "")}
    assert state(published=unrecorded, reference_fingerprint="") == DayState.PUBLISHED


def test_every_state_has_a_reason_and_the_state_alone_is_the_same():
    cases = [
        {},
        {"published": {"a": ("v1", "fp1", "fx:r1,mk:m1")}},
        {"source_fingerprint": "fp2"},
        {"reference_fingerprint": "fx:r9,mk:m1"},
        {"last_attempt_failed": True},
        {"is_ready": False},
    ]
    for overrides in cases:
        assert verdict(**overrides).state == state(**overrides)
        assert verdict(**overrides).reason
    assert verdict(published={"a": ("v1", "fp1", "fx:r1,mk:m1")}).reason == "never published by b"


def test_only_unfinished_days_are_built_unless_restating():
    states = dict(zip(days(0, 1, 2, 3, 4), list(DayState), strict=True))
    assert planning.days_to_build(states, restate=False) == [
        d for d, s in states.items() if s in planning.NEEDS_WORK
    ]
    assert DayState.PUBLISHED in {states[d] for d in planning.days_to_build(states, restate=True)}


def test_duckdb_runs_chunks_one_at_a_time():
    concurrency, note = planning.effective_concurrency(4, False, "duckdb")
    assert concurrency == 1
    assert note.startswith("--max-concurrency 4: DuckDB runs one chunk at a time")
    assert planning.effective_concurrency(1, False, "duckdb") == (1, None)
    assert planning.effective_concurrency(4, True, "spark") == (4, None)


def test_readiness_rule(tmp_path):
    write_day(tmp_path, D, DaySpec(payments=20))
    assert readiness.day_readiness(tmp_path, DATASET, D).is_ready

    manifest = readiness.day_folder(tmp_path, DATASET, D) / "_SUCCESS"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**data, "records": data["records"] + 1}))
    verdict = readiness.day_readiness(tmp_path, DATASET, D)
    assert not verdict.is_ready and "records" in verdict.reason

    manifest.unlink()
    assert readiness.day_readiness(tmp_path, DATASET, D).reason == "no _SUCCESS manifest"
    assert readiness.day_readiness(tmp_path, DATASET, D + timedelta(1)).reason == (
        "no landing folder"
    )


def test_a_line_without_a_final_newline_still_counts():
    assert readiness.count_lines(b"") == 0
    assert readiness.count_lines(b"a\nb\n") == 2
    assert readiness.count_lines(b"a\nb") == 2
    assert readiness.count_lines(b"a\n\nb\n") == 3


def test_a_part_file_is_summarized_a_block_at_a_time_as_if_read_whole(tmp_path, monkeypatch):
    # GIVEN part files whose lines and final newline fall on either side of a block's end
    monkeypatch.setattr(readiness, "SUMMARY_BLOCK_BYTES", 4)
    for content in (b"", b"abc\n", b"abcd", b"abc\nd", b"a\n\nb\n\n", b"abcdefgh\n\xff\r\n1"):
        part = tmp_path / "part-0.jsonl"
        part.write_bytes(content)
        # WHEN it is summarized block by block
        summary = readiness.part_summary(part)
        # THEN its lines and hash are those of the whole file's bytes
        assert summary.lines == readiness.count_lines(content)
        assert summary.sha256 == hashlib.sha256(content).digest()


def test_a_reexport_changes_the_fingerprint(tmp_path):
    write_day(tmp_path, D, DaySpec(payments=20))
    before = readiness.day_readiness(tmp_path, DATASET, D).source_fingerprint
    write_day(tmp_path, D, DaySpec(payments=20, amount_factor=2, export_version=2))
    assert readiness.day_readiness(tmp_path, DATASET, D).source_fingerprint != before


def test_an_unchanged_day_is_read_once_per_process(tmp_path, monkeypatch):
    # GIVEN a landed day whose files have settled (any age counts as settled here)
    monkeypatch.setattr(readiness, "SETTLED_NS", 0)
    write_day(tmp_path, D, DaySpec(payments=20, parts=2))
    first = readiness.day_readiness(tmp_path, DATASET, D)
    reads = []
    monkeypatch.setattr(readiness, "_summarize", lambda content: reads.append(content))
    # WHEN the rule is asked again about the same, untouched day
    again = readiness.day_readiness(tmp_path, DATASET, D)
    # THEN no part file is read again, and the verdict is the same
    assert reads == []
    assert again == first and again.is_ready


def test_a_reexported_day_is_never_served_from_the_cache(tmp_path, monkeypatch):
    # GIVEN a ready day whose part summaries are cached
    monkeypatch.setattr(readiness, "SETTLED_NS", 0)
    write_day(tmp_path, D, DaySpec(payments=20))
    before = readiness.day_readiness(tmp_path, DATASET, D)
    part = readiness.day_folder(tmp_path, DATASET, D) / "part-0000.jsonl"
    stat = part.stat()
    # WHEN one part file is rewritten in place: same size, same mtime, different bytes
    content = part.read_bytes()
    part.write_bytes(content.replace(b'"', b"'", 1))
    os.utime(part, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    after = readiness.day_readiness(tmp_path, DATASET, D)
    # THEN the verdict is computed from the new bytes (ctime moved), not served stale
    assert part.stat().st_size == stat.st_size
    assert after.source_fingerprint != before.source_fingerprint
    # AND a re-export that drops a line is not ready, whatever was cached
    write_day(tmp_path, D, DaySpec(payments=20))
    lines = part.read_bytes().splitlines(keepends=True)
    part.write_bytes(b"".join(lines[:-1]))
    assert "records" in readiness.day_readiness(tmp_path, DATASET, D).reason


def test_a_file_still_being_written_is_not_cached(tmp_path):
    # GIVEN a day written just now (younger than SETTLED_NS) and an empty cache
    write_day(tmp_path, D, DaySpec(payments=20))
    readiness._settled_part_summary.cache_clear()
    # WHEN the rule reads it
    assert readiness.day_readiness(tmp_path, DATASET, D).is_ready
    # THEN nothing is memoized: a rewrite within the file system's clock tick is still seen
    assert readiness._settled_part_summary.cache_info().currsize == 0


def test_hour_holes_are_runs_of_empty_hours_between_busy_ones():
    busy = {hour: 5 for hour in range(24)}
    hole = {hour: count for hour, count in busy.items() if not 8 <= hour < 14}
    quiet_night = {hour: count for hour, count in busy.items() if hour >= 4}

    holes = find_hour_holes({D: hole, D + timedelta(1): quiet_night, D + timedelta(2): busy}, 3)

    assert [(h.day, h.first_hour, h.last_hour, h.hours) for h in holes] == [(D, 8, 13, 6)]


def test_the_fx_seed_is_what_the_generator_writes(tmp_path):
    from refill.sample_data import write_fx_seed
    from refill.settings import PACKAGE_PROJECT_DIR as PROJECT_DIR

    write_fx_seed(tmp_path / "fx.csv")
    assert (tmp_path / "fx.csv").read_text() == (
        PROJECT_DIR / "seeds/fx_rates_daily.csv"
    ).read_text()
