"""A restatement preview's SQL: its record (ops.refill_previews) and the chunks a publish
of it committed (ops.refill_preview_chunks), what it kept (schema `preview`, written by
macros/wap/refill_keep_preview.sql), the published state it depends on, and dropping it (once
published, expired, or left by a killed run); its report is refill.warehouse.preview_changes.
The decisions are refill.rules.preview's.

The record's tables are created here, not in the ops DDL macro: only a preview needs them,
and a warehouse that never previewed has none. A record is read as its row's JSON
(`to_json`), here and in the publish operation (macros/wap/refill_preview_refusal.sql), which
hands it to `refusal_now` through the plugin: one reading of a record for both.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

from refill import settings
from refill.errors import RefillError
from refill.rules import readiness, reference
from refill.rules.preview import (
    PREVIEW_ID,
    PreviewRecord,
    PublishedState,
    checked_preview_id,
    state_key,
    what_changed,
)
from refill.warehouse import diff, ops

PREVIEW_SCHEMA = "preview"
SUFFIXES = ("__ledger", "__on_publish")

CREATE_RECORDS = """
create table if not exists ops.refill_previews (
    preview_id varchar not null,
    run_id varchar not null,
    created_at timestamp not null,
    expires_at timestamp not null,
    window_start date not null,
    window_end date not null,
    select_models varchar,
    record json not null,
    report json
)
"""
# A publish of the preview marks each chunk here in the chunk's own publish transaction.
CREATE_CHUNKS = """
create table if not exists ops.refill_preview_chunks (
    preview_id varchar not null,
    chunk_start date not null,
    chunk_end date not null,
    run_id varchar not null,
    published_at timestamp not null
)
"""


# Spark: parquet tables partitioned by preview (a preview's rows are dropped by overwriting
# its partition with none: no delete on parquet), external at the warehouse's own folder
# (refill_spark_location), the partition column last as Spark keeps it.
SPARK_COLUMNS = {
    "refill_previews": "run_id string, created_at timestamp, expires_at timestamp, "
    "window_start date, window_end date, select_models string, record string, report string",
    "refill_preview_chunks": "chunk_start date, chunk_end date, run_id string, "
    "published_at timestamp",
}


def _on_spark(connection) -> bool:
    """An engine without delete or transactions (Spark's parquet: append_only connections)."""
    return getattr(connection, "append_only", False)


def _spark_folder(connection, schema: str, table: str) -> str:
    """Where Spark keeps `schema`.`table` (refill_spark_location's folder)."""
    (_, warehouse_dir), *_ = connection.execute("set spark.sql.warehouse.dir").fetchall()
    return f"{warehouse_dir}/{schema}.db/{table}"


def create_relations(connection) -> None:
    if not _on_spark(connection):
        connection.execute(CREATE_RECORDS)
        connection.execute(CREATE_CHUNKS)
        return
    connection.execute("create schema if not exists ops")
    for table, columns in SPARK_COLUMNS.items():
        connection.execute(
            f"create table if not exists ops.{table} ({columns}, preview_id string) "
            "using parquet options (partitionOverwriteMode 'dynamic') partitioned by (preview_id) "
            "location ?",
            [_spark_folder(connection, "ops", table)],
        )


def kept_relations(connection, preview_id: str) -> dict[str, str]:
    """relation name (the ledger's model_name) -> the preview's table of its kept rows."""
    prefix = checked_preview_id(preview_id) + "__"
    rows = connection.execute(
        "select table_name from information_schema.tables where table_schema = ? "
        "and left(table_name, ?) = ? order by 1",
        [PREVIEW_SCHEMA, len(prefix), prefix],
    ).fetchall()
    kept = {}
    for (table,) in rows:
        if table.endswith(SUFFIXES):
            continue
        # <id>__<schema>__<identifier>
        identifier = table[len(prefix) :].split("__", 1)[1]
        kept[identifier] = f"{PREVIEW_SCHEMA}.{diff.quoted(table)}"
    return kept


def kept_ledger(relation: str) -> str:
    """The preview's table of the ledger rows it computed beside a kept relation."""
    return relation[:-1] + '__ledger"'


def read_kept_ledger(connection, preview_id: str) -> list[tuple[str, date, str, str, int, str]]:
    """(model, day, code_version, source_fingerprint, rows_written, reference_fingerprint)
    the preview computed."""
    rows = []
    for model, relation in kept_relations(connection, preview_id).items():
        rows += connection.execute(
            "select model_name, partition_date, code_version, source_fingerprint, rows_written, "
            f"reference_fingerprint from {kept_ledger(relation)} where model_name = ? "
            "order by partition_date",
            [model],
        ).fetchall()
    return rows


def read_published_state(connection, models: list[str], start: date, end: date) -> PublishedState:
    """(run_id, code_version) of each published model-day in the window: what a later run
    that publishes one of the preview's days changes."""
    if not ops.has_table(connection, "ops", "partition_ledger") or not models:
        return {}
    rows = connection.execute(
        "select model_name, partition_date, run_id, code_version from ops.partition_ledger "
        "where status = 'published' and partition_date between ? and ? "
        "and array_contains(?, model_name)",
        [start, end, models],
    ).fetchall()
    return {state_key(model, day): [run_id, code] for model, day, run_id, code in rows}


def save_record(connection, record: PreviewRecord, report: dict) -> None:
    create_relations(connection)
    body = {
        "models": record.models,
        "chunks": [[s.isoformat(), e.isoformat()] for s, e in record.chunks],
        "code_versions": record.code_versions,
        "fingerprints": record.fingerprints,
        "published": record.published,
        "references": record.references,
        "datasets": record.datasets,
    }
    insert = "insert into ops.refill_previews values (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    if _on_spark(connection):  # the partition column first, as a static partition
        insert = (
            "insert into ops.refill_previews partition (preview_id = ?) "
            "select ?, ?, ?, ?, ?, ?, ?, ?"
        )
    connection.execute(
        insert,
        [
            record.preview_id,
            record.run_id,
            record.created_at,
            record.expires_at,
            record.start,
            record.end,
            record.select,
            json.dumps(body),
            json.dumps(report, default=str),
        ],
    )


def read_record(connection, preview_id: str) -> PreviewRecord | None:
    if not ops.has_table(connection, "ops", "refill_previews"):
        return None
    as_json = "to_json(r)::varchar"
    if _on_spark(connection):  # a timestamp as datetime.fromisoformat reads it, as DuckDB's
        as_json = (
            "to_json(struct(r.*), map('timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSS', "
            "'ignoreNullFields', 'false'))"  # a null column kept, as DuckDB's to_json does
        )
    row = connection.execute(
        f"select {as_json} from ops.refill_previews as r where preview_id = ?",
        [checked_preview_id(preview_id)],
    ).fetchone()
    if row is None:
        return None
    chunks = []
    if ops.has_table(connection, "ops", "refill_preview_chunks"):
        chunks = connection.execute(
            f"select {as_json} from ops.refill_preview_chunks as r where preview_id = ?",
            [preview_id],
        ).fetchall()
    return record_of(json.loads(row[0]), [json.loads(chunk) for (chunk,) in chunks])


def record_of(row: dict, published_chunks: list[dict]) -> PreviewRecord:
    """A record from its row of ops.refill_previews and its rows of ops.refill_preview_chunks,
    as JSON objects (`to_json` of the rows)."""
    body = row["record"] if isinstance(row["record"], dict) else json.loads(row["record"])
    return PreviewRecord(
        preview_id=row["preview_id"],
        run_id=row["run_id"],
        created_at=datetime.fromisoformat(row["created_at"]),
        expires_at=datetime.fromisoformat(row["expires_at"]),
        start=date.fromisoformat(row["window_start"]),
        end=date.fromisoformat(row["window_end"]),
        select=row["select_models"],
        models=body["models"],
        chunks=[(date.fromisoformat(s), date.fromisoformat(e)) for s, e in body["chunks"]],
        code_versions=body["code_versions"],
        fingerprints=body["fingerprints"],
        published=body["published"],
        references=body.get("references", {}),  # none in a record from before they were kept
        datasets=body.get("datasets", []),
        published_chunks=[
            (date.fromisoformat(c["chunk_start"]), date.fromisoformat(c["chunk_end"]))
            for c in published_chunks
        ],
    )


def current_fingerprints(
    datasets, chunks: list[tuple[date, date]], landing: Path | None = None
) -> dict[date, set[str]]:
    """Each day's source fingerprints in the landing now (`landing`, else the settings'),
    one per dataset, for the days of `chunks`: what a kept ledger row's fingerprint must
    still be among."""
    found: dict[date, set[str]] = {}
    root = settings.landing_root() if landing is None else landing
    for start, end in chunks:
        for verdict, each in readiness.datasets_window_readiness(root, list(datasets), start, end):
            found[verdict.day] = {v.source_fingerprint for v in each if v.source_fingerprint}
    return found


def current_references(
    declared: dict, datasets: list[str], chunks: list[tuple[date, date]]
) -> dict[date, list[str]]:
    """Each day's reference fingerprint now, one per dataset of `datasets` the project
    declares (`declared`: dataset -> refill_dataset_reference, as the publish operation read
    the project), for the days of `chunks`, from the seed files (refill.rules.reference)."""
    reads = [
        reference.parse_reads(entry["reads"], entry["seeds"], entry["model"])
        for entry in (declared[name] for name in datasets if name in declared)
    ]
    found: dict[date, list[str]] = {}
    for start, end in chunks:
        found.update(reference.datasets_fingerprints(reads, start, end))
    return found


def refusal_now(facts: str, start: date, end: date, landing: Path | None = None) -> str:
    """ "" when chunk start..end of a preview may be published now, else the one line why:
    refill.rules.preview.what_changed on the facts the publish operation read inside its own
    invocation (JSON: the preview id, its record's rows, the ledger's published rows of the
    chunk, the project's code versions and what its datasets declare they read of the seeds)
    and on the landing (`landing`, else the settings') and the seed files as they are now."""
    state = json.loads(facts)
    preview_id = state["preview_id"]
    if not state.get("record"):
        return f"no preview {preview_id} in this warehouse (published, expired or never made)"
    record = record_of(state["record"], state.get("published_chunks") or [])
    published = {
        state_key(row["model_name"], date.fromisoformat(row["partition_date"])): [
            row["run_id"],
            row["code_version"],
        ]
        for row in state.get("published") or []
        if row["model_name"] in record.models
    }
    try:
        references = current_references(
            state.get("references") or {}, record.datasets, record.remaining_chunks
        )
    except (RefillError, OSError) as unreadable:
        return f"the reference data of preview {preview_id}'s days cannot be read: {unreadable}"
    reason = what_changed(
        record,
        now=ops.utc_now(),
        code_versions=state["code_versions"],
        current_fingerprints=current_fingerprints(record.datasets, record.remaining_chunks, landing)
        if record.datasets
        else {},
        published=published,
        current_references=references,
        chunk=(start, end),
    )
    return reason or ""


def drop_preview(connection, preview_id: str) -> None:
    """Every table the preview kept, and its record."""
    prefix = checked_preview_id(preview_id) + "__"
    tables = connection.execute(
        "select table_name from information_schema.tables where table_schema = ? "
        "and left(table_name, ?) = ?",
        [PREVIEW_SCHEMA, len(prefix), prefix],
    ).fetchall()
    for (table,) in tables:
        relation = f"{PREVIEW_SCHEMA}.{diff.quoted(table)}"
        if _on_spark(connection):  # an external table: its files emptied before the drop
            connection.execute(f"drop table if exists {relation}")
            connection.execute(
                f"create table {relation} using parquet location ? as select 1 as emptied "
                "where false",
                [_spark_folder(connection, "preview", table)],
            )
        connection.execute(f"drop table if exists {relation}")
    for records in ("refill_previews", "refill_preview_chunks"):
        if not ops.has_table(connection, "ops", records):
            continue
        if _on_spark(connection):  # no delete on parquet: the preview's partition emptied
            nothing = ", ".join(
                f"cast(null as {column.split()[1]})"
                for column in SPARK_COLUMNS[records].split(", ")
            )
            connection.execute(
                f"insert overwrite table ops.{records} partition (preview_id = ?) "
                f"select {nothing} where false",
                [preview_id],
            )
        else:
            connection.execute(f"delete from ops.{records} where preview_id = ?", [preview_id])


def drop_abandoned_previews(connection, is_alive) -> list[str]:
    """Drop what previews that never recorded themselves left in schema `preview` (a killed
    `--preview`: its kept chunks), and return their ids. Never a live preview's: a preview
    run's id is in its run-log row (parameters.preview) from before it keeps a chunk, and
    `is_alive(run_id)` (refill.warehouse.run_liveness) is true while its process lives.
    Called under the warehouse lock (flows/tasks.py, prepare_warehouse)."""
    kept = connection.execute(
        "select distinct split_part(table_name, '__', 1) from information_schema.tables "
        "where table_schema = ?",
        [PREVIEW_SCHEMA],
    ).fetchall()
    ids = {preview_id for (preview_id,) in kept if PREVIEW_ID.fullmatch(preview_id)}
    if ids and ops.has_table(connection, "ops", "refill_previews"):
        recorded = connection.execute("select preview_id from ops.refill_previews").fetchall()
        ids -= {preview_id for (preview_id,) in recorded}
    dropped = []
    for preview_id in sorted(ids):
        runs = []
        if ops.has_table(connection, "ops", "run_log"):
            preview_of = (
                "get_json_object(parameters, '$.preview')"
                if _on_spark(connection)
                else "parameters->>'preview'"
            )
            runs = connection.execute(
                f"select run_id from ops.run_log where {preview_of} = ?", [preview_id]
            ).fetchall()
        if not any(is_alive(run_id) for (run_id,) in runs):
            drop_preview(connection, preview_id)
            dropped.append(preview_id)
    return dropped


def expired_previews(connection, now: datetime) -> list[str]:
    if not ops.has_table(connection, "ops", "refill_previews"):
        return []
    rows = connection.execute(
        "select preview_id from ops.refill_previews where expires_at <= ? order by 1", [now]
    ).fetchall()
    return [preview_id for (preview_id,) in rows]


def latest_preview(connection, now: datetime) -> tuple[str, date, date, datetime] | None:
    """The newest preview not expired at `now` (id, window start, window end, expiry): the
    one the board points at, or None."""
    if not ops.has_table(connection, "ops", "refill_previews"):
        return None
    return connection.execute(
        "select preview_id, window_start, window_end, expires_at from ops.refill_previews "
        "where expires_at > ? order by created_at desc, preview_id limit 1",
        [now],
    ).fetchone()
