"""On Spark the engine runs the readiness rule itself (SELECT TRANSFORM over
refill.warehouse.spark_readiness, spark__refill_window_readiness): the verdicts a plain
`dbt build` gates on are the rule's own, on any landing. A property over generated
landings, with the rule (refill/rules/readiness.py) as the oracle: day folders absent,
empty or full; manifests of any JSON value in any field, of any text, not UTF-8, or a
folder; part files of any name and kind (a file with lines, a zero-byte file, which Spark's
file sources never list, an empty folder, a folder holding a file). Every field of every
day's verdict must agree, and each ready part file's sha256 (the line reader checks the
bytes it reads against it) must be the file's.

Each example is one statement on the cluster: the gate's SQL is compiled once, over one
landing folder the examples rewrite."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from refill.rules import readiness
from refill.sample_data import DATASET

pytestmark = pytest.mark.spark

FIRST = date(2026, 3, 1)
DAYS = 3  # the window; the examples write its first two days at most

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)
VALID_NAMES = ["part-0000.jsonl", "part-0001.jsonl", "part-0002.jsonl", "part-a_b-C.jsonl"]
ODD_NAMES = [
    "part-.jsonl",  # the glob's, not the rule's
    "part-x y.jsonl",
    "part-\t.jsonl",
    "part-é.jsonl",
    "part-" + "z" * 65 + ".jsonl",
    "other.txt",  # not a part file
    ".part-0003.jsonl",
]
# Mostly what gets past the names to the counts and the bytes, where most of the rule is.
PART_NAMES = st.sampled_from(VALID_NAMES * 4 + ODD_NAMES)
LINES = st.lists(st.text(alphabet=st.characters(exclude_characters="\n"), max_size=12), max_size=4)


@st.composite
def parts(draw) -> list[tuple[str, str, bytes]]:
    """(name, kind, bytes) per entry of a day folder: kind file, empty_dir or dir_with_file."""
    entries = {}
    for name in draw(st.lists(PART_NAMES, min_size=1, max_size=3, unique=True)):
        kind = draw(st.sampled_from(["file"] * 6 + ["empty_dir", "dir_with_file"]))
        lines = draw(LINES)
        ending = draw(st.sampled_from(["\n", "\r\n", ""]))
        body = "".join(line + ending for line in lines).encode()
        if draw(st.booleans()) and body:
            body = body[:-1] + b"\xff"  # a byte that is not UTF-8
        entries[name] = (kind, body)
    return [(name, kind, body) for name, (kind, body) in entries.items()]


@st.composite
def manifests(draw, day: date, entries, always: bool = False) -> bytes | None:
    """A _SUCCESS: absent (None), one that agrees with the files, one with fields of any
    JSON value (or missing), any text, or bytes that are not UTF-8."""
    files = [body for name, kind, body in entries if kind == "file"]
    agreeing = {
        "dt": day.isoformat(),
        "files": len([name for name, _, _ in entries if name.startswith("part-")]),
        "records": sum(readiness.count_lines(body) for body in files),
        "exported_at": draw(
            st.sampled_from(["2026-03-02T02:13:00Z", "2026-03-02T02:13:00.5+00:00"])
        ),
    }
    kinds = ["miscounted", "agreeing", "fields"]
    choice = draw(st.sampled_from(kinds if always else [*kinds, "absent", "text", "bytes"]))
    if choice == "absent":
        return None
    if choice == "agreeing":
        return json.dumps(agreeing).encode()
    if choice == "miscounted":  # a file or a line more or fewer than the files hold
        field = draw(st.sampled_from(["files", "records"]))
        agreeing[field] = max(agreeing[field] + draw(st.sampled_from([-1, 1])), 0)
        return json.dumps(agreeing).encode()
    if choice == "text":
        return draw(st.text(max_size=40)).encode()
    if choice == "bytes":
        return b'{"dt": "\xff"}'
    fields = dict(agreeing)
    for name in draw(st.lists(st.sampled_from(list(agreeing)), max_size=2, unique=True)):
        if draw(st.booleans()):
            fields.pop(name)
        else:
            fields[name] = draw(JSON_VALUES)
    return json.dumps(fields).encode()


@st.composite
def landings(draw) -> list[tuple[date, str, bytes | None, list]]:
    """Per day of the window's first two: (day, folder kind, manifest, entries). The first
    day always holds part files and a manifest (the counts, the bytes and the fingerprint
    are most of the rule); the second may be anything, absent or empty too."""
    days = []
    for offset in range(2):
        day = FIRST + timedelta(offset)
        folder = "full" if offset == 0 else draw(st.sampled_from(["absent", "empty", "full"]))
        entries = draw(parts()) if folder == "full" else []
        manifest = draw(manifests(day, entries, always=offset == 0)) if folder == "full" else None
        manifest_is_folder = offset == 1 and folder == "full" and draw(st.integers(0, 4)) == 0
        days.append((day, folder, b"dir" if manifest_is_folder else manifest, entries))
    return days


def write(landing: Path, drawn) -> None:
    if landing.exists():
        shutil.rmtree(landing)
    (landing / DATASET).mkdir(parents=True)
    for day, folder_kind, manifest, entries in drawn:
        folder = readiness.day_folder(landing, DATASET, day)
        if folder_kind == "absent":
            continue
        folder.mkdir()
        for name, kind, body in entries:
            if kind == "file":
                (folder / name).write_bytes(body)
            else:
                (folder / name).mkdir()
                if kind == "dir_with_file":
                    (folder / name / "inside").write_bytes(body or b"x")
        if manifest == b"dir":
            (folder / readiness.MANIFEST_NAME).mkdir()
        elif manifest is not None:
            (folder / readiness.MANIFEST_NAME).write_bytes(manifest)


@pytest.fixture(scope="module")
def gate(cluster, cluster_dbt, tmp_path_factory):
    """(the gate's SQL for the window, compiled once; the landing folder it reads)."""
    landing = tmp_path_factory.mktemp("readiness") / "landing"
    expression = (
        "{{ refill_spark_verdict_rows_sql(refill_spark_readiness_request('window', 'payments', "
        f"{{'start_date': modules.datetime.date({FIRST.year}, {FIRST.month}, {FIRST.day}), "
        f"'end_date': modules.datetime.date({FIRST.year}, {FIRST.month}, {FIRST.day + DAYS - 1}), "
        f"'days': {DAYS}}})) }}}}"
    )
    with pytest.MonkeyPatch.context() as patch:
        for key, value in cluster.environment().items():
            patch.setenv(key, value)
        patch.setenv("REFILL_LANDING", str(landing))
        result = cluster_dbt.invoke(["compile", "--inline", expression])
    assert result.success, result.exception
    return result.result.results[0].node.compiled_code, landing


def on_spark(cluster_workspace, sql: str) -> list[dict]:
    """The verdicts as the gate reads them: one dict per day, its part files and sha256s."""
    by_day: dict[str, dict] = {}
    ordered = f"select * from ({sql}) as verdicts order by day, part_file"
    for row in cluster_workspace.rows(ordered):
        day, is_ready, reason, part, sha256, files, records, exported_at, fingerprint = row
        verdict = by_day.setdefault(
            day.isoformat(),
            {
                "day": day.isoformat(),
                "is_ready": is_ready,
                "reason": reason,
                "part_files": [],
                "manifest_files": files,
                "manifest_records": records,
                "exported_at": exported_at,
                "source_fingerprint": fingerprint,
                "part_sha256": [],
            },
        )
        if part is not None:
            verdict["part_files"].append(part)
            verdict["part_sha256"].append(sha256)
    return list(by_day.values())


def by_the_rule(landing: Path) -> list[dict]:
    verdicts = []
    for verdict in readiness.window_readiness(landing, DATASET, FIRST, FIRST + timedelta(DAYS - 1)):
        expected = verdict.to_json()
        expected["part_sha256"] = [
            hashlib.sha256((landing / part).read_bytes()).hexdigest() if verdict.is_ready else None
            for part in verdict.part_files
        ]
        verdicts.append(expected)
    return verdicts


@given(drawn=landings())
def test_the_engine_gives_the_rules_verdict_on_any_landing(gate, cluster_workspace, drawn):
    sql, landing = gate
    # GIVEN a landing of any manifests and files
    write(landing, drawn)
    # WHEN the engine runs the readiness gate's statement over it
    # THEN every day's verdict is the rule's, field for field, with each file's sha256
    assert on_spark(cluster_workspace, sql) == by_the_rule(landing)
