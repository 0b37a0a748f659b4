"""The readiness rule on Spark: run by the engine itself, in a process of its own.

On DuckDB, dbt asks the rule (refill.rules.readiness) through SQL functions the plugin
registers. dbt-spark has no such hook, and a plain `dbt build` on Spark runs no refill code:
so the staging gate (spark__refill_window_readiness) has the engine run this module as a
script transformation (`SELECT TRANSFORM ... USING`), on one of its own tasks, and reads the
verdicts it prints. The rule is not translated into Spark SQL: the engine's file sources
cannot see what the rule must see (a zero-byte part file, which an empty day's export
writes, is never listed; nor is an empty folder), so a translation could not agree with it
(docs/spark.md, "Readiness on Spark").

Input, one request per line, tab-separated (the transformation's own row format):
    window <TAB> dataset <TAB> start <TAB> end <TAB> landing root
    days <TAB> dataset <TAB> <TAB> <TAB> landing root
    reference <TAB> declaration <TAB> start <TAB> end <TAB>
    preview <TAB> facts <TAB> start <TAB> end <TAB> landing root
Output, tab-separated: for `window`, every day of it and its verdict as one line of JSON
(DayReadiness.to_json, plus `part_sha256`: each part file's sha256, which the line reader
checks the bytes it reads against); for `days`, every landed day (readiness.landed_days);
for `reference`, every day of the window and its reference fingerprint
(refill.rules.reference, for the dataset the declaration describes: the JSON of
refill_dataset_reference) with the sha256 of the seed files it was computed from, which the
staging model checks against the loads ops.seed_loads records, or the one line why the
declaration or a seed file cannot be read (`error`); for `preview`, one line `refusal` with
{"refusal": ...}: whether the chunk start..end of a restatement preview may be published now
(refill.warehouse.preview_store.refusal_now on the facts the publish operation read: '' or
the one line why), asked by spark__refill_preview_refusal.

It needs only the standard library and refill.rules: the Python that runs the engine's
tasks ($PYSPARK_PYTHON, else python3) must import refill, and read the landing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from datetime import date
from pathlib import Path

from refill.errors import RefillError
from refill.rules import readiness, reference

# What the SQL side runs (constant: the values travel as the transformation's input rows).
COMMAND = '"${PYSPARK_PYTHON:-python3}" -m refill.warehouse.spark_readiness'


def answers(request: list[str]) -> Iterator[tuple[str, str]]:
    """The output lines (day, payload) of one request (see the module's docstring)."""
    kind, dataset, start, end, root = (request + [""] * 5)[:5]
    landing = Path(root)
    if root and not landing.is_absolute():
        # this process runs in a folder of Spark's, not dbt's: a relative root names nothing
        raise ValueError(
            f"refill input: the landing root {root!r} is not an absolute path "
            "(the macros give it absolute: spark__refill_landing_root)"
        )
    if kind == "days":
        for day in readiness.landed_days(landing, dataset):
            yield day.isoformat(), ""
        return
    if kind == "reference":
        yield from _reference_answers(dataset, date.fromisoformat(start), date.fromisoformat(end))
        return
    if kind == "preview":
        from refill.warehouse import preview_store  # only this request needs the store

        refusal = preview_store.refusal_now(
            dataset, date.fromisoformat(start), date.fromisoformat(end), landing=landing
        )
        yield "refusal", json.dumps({"refusal": refusal}, ensure_ascii=True)
        return
    if kind != "window":
        raise ValueError(f"unknown request {kind!r}")
    for verdict in readiness.window_readiness(
        landing, dataset, date.fromisoformat(start), date.fromisoformat(end)
    ):
        payload = verdict.to_json()
        payload["part_sha256"] = [
            readiness.part_summary(landing / part).sha256.hex() if verdict.is_ready else None
            for part in verdict.part_files
        ]
        yield verdict.day.isoformat(), json.dumps(payload, ensure_ascii=True)


def _reference_answers(declared: str, start: date, end: date) -> Iterator[tuple[str, str]]:
    dataset = json.loads(declared)
    try:
        reads = reference.parse_reads(dataset["reads"], dataset["seeds"], dataset["model"])
        fingerprints, contents = reference.window_fingerprints(reads, start, end)
    except (RefillError, OSError) as refused:
        yield start.isoformat(), json.dumps({"error": str(refused)}, ensure_ascii=True)
        return
    seed_contents = ",".join(sorted(f"{seed_id}={sha}" for seed_id, sha in contents.items()))
    for day, fingerprint in fingerprints.items():
        payload = {"reference_fingerprint": fingerprint, "seed_contents": seed_contents}
        yield day.isoformat(), json.dumps(payload, ensure_ascii=True)


def main(lines: Iterable[str]) -> int:
    for line in lines:
        request = line.rstrip("\n").split("\t")
        for day, payload in answers(request):
            sys.stdout.write(f"{day}\t{payload}\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.stdin))
