"""On the Spark cluster, the bytes read are the bytes checked: a ready day's part files
swapped once the reading model's statement is about to run (one for a symbolic link to a
secret, one for a FIFO) stop the build naming the file; nothing of the secret is stored,
nothing waits on the FIFO, and nothing is published. Spark's reader checks each file's
sha256 against its verdict's in the same statement, and that every file a verdict hashed
was read (Spark's listing skips a FIFO). The same property on DuckDB, over every kind and
moment: tests/properties/test_landed_swap.py."""

from __future__ import annotations

import json
import os
from datetime import date

from refill.rules import readiness
from refill.rules.window import window_vars
from refill.sample_data import DATASET, payment_line, write_landed_day
from refill.warehouse.dbt_runner import outcome_of
from tests.properties.test_landed_swap import READER, SECRET, FifoWatch, secret_lines
from tests.spark.test_spark_pipeline import tables_in

DAY = date(2026, 3, 9)


def test_a_part_file_swapped_before_the_read_on_the_cluster_is_refused_and_never_read(
    cluster_dbt, cluster_workspace, tmp_path
):
    # GIVEN a ready day of two part files, and a secret outside the landing
    write_landed_day(
        cluster_workspace.landing,
        DAY,
        [[payment_line(DAY, 10 * p + n) for n in range(3)] for p in range(2)],
    )
    folder = readiness.day_folder(cluster_workspace.landing, DATASET, DAY)
    linked, piped = folder / "part-0000.jsonl", folder / "part-0001.jsonl"
    secret = tmp_path / "outside" / "secret.jsonl"
    secret.parent.mkdir()
    secret.write_bytes(secret_lines(3))

    # WHEN, as the reading model's statement is about to run, one part file is renamed over
    # by a link to the secret and the other by a FIFO
    swapped = []

    def before_the_read(event) -> None:
        node = getattr(getattr(event.data, "node_info", None), "unique_id", None)
        if event.info.name == "NodeExecuting" and node == READER and not swapped:
            (folder / ".link").symlink_to(secret)
            os.replace(folder / ".link", linked)
            os.mkfifo(folder / ".fifo")
            os.replace(folder / ".fifo", piped)
            swapped.append(node)

    with FifoWatch(piped) as fifo:
        result = cluster_dbt.invoke(
            [
                "build",
                "--vars",
                json.dumps(window_vars(DAY, DAY)),
                "--exclude-resource-type",
                "unit_test",
            ],
            callbacks=[before_the_read],
        )
    outcome = outcome_of(result)

    # THEN the build is refused naming a swapped file, nothing read the FIFO, and nothing
    # is published: no ledger row, no payment, no byte of the secret
    assert swapped
    assert not outcome.success
    assert "refill readiness:" in outcome.message and "changed after its readiness" in (
        outcome.message
    ), outcome.message
    assert linked.name in outcome.message or piped.name in outcome.message
    assert not fifo.read_by_someone
    stored = repr(
        [
            cluster_workspace.rows(f"select * from {schema}.{table}")
            for schema in ("main", "ops", "staging", "wap")
            for table in tables_in(cluster_workspace, schema)
            # not the reader's binaryFile table: a query of it reads the landing as it is now
            if not table.startswith("landed_files__")
        ]
    )
    assert SECRET not in stored
    assert cluster_workspace.rows("select count(*) from ops.partition_ledger") == [(0,)]
