"""The Spark warehouse's Connection on the cluster, over thrift: every `?` becomes a typed,
escaped literal (refill.warehouse.spark_literals), so hostile strings, dates, timestamps and
decimals round-trip exactly through the Thrift Server and back, and a hostile string can
only ever be a value."""

from __future__ import annotations

import os
import time
from datetime import date, datetime
from decimal import Decimal

import pytest

pytest.importorskip("pyspark")

from refill.warehouse.spark_engine import SparkConnection, SparkEngineError  # noqa: E402
from refill.warehouse.spark_thrift import ThriftStatements, connect  # noqa: E402
from tests.unit.test_spark_literals import HOSTILE  # noqa: E402


@pytest.fixture(scope="module")
def connection(cluster, tmp_path_factory):
    """The boundary's connection on a Thrift session of the Spark tests' one cluster."""
    with pytest.MonkeyPatch.context() as patch:
        for key, value in cluster.environment().items():
            patch.setenv(key, value)
        statements = ThriftStatements(connect(), str(tmp_path_factory.mktemp("locks")))
    connection = SparkConnection(statements, read_only=False)
    connection.execute("create database if not exists probe")
    connection.execute("drop table if exists probe.values_in")
    connection.execute(
        "create table probe.values_in (k bigint, s string, d date, ts timestamp, "
        "amount decimal(18,2)) using parquet"
    )
    yield connection
    connection.execute("drop table if exists probe.values_in")
    connection.close()


def test_hostile_strings_and_typed_values_round_trip(connection):
    rows = [
        [index, text, date(2026, 1, index + 1), datetime(2026, 1, 2, 3, 4, 5), Decimal("-12.30")]
        for index, text in enumerate(HOSTILE)
    ]
    connection.executemany("insert into probe.values_in values (?, ?, ?, ?, ?)", rows)
    back = connection.execute("select k, s, d, ts, amount from probe.values_in order by k")
    assert [list(row) for row in back.fetchall()] == rows
    for index, text in enumerate(HOSTILE):
        (found,) = connection.execute(
            "select count(*) from probe.values_in where s = ? and k = ?", [text, index]
        ).fetchone()
        assert found == 1, text
    # the table is still whole: no string ended a statement or dropped anything
    (count,) = connection.execute("select count(*) from probe.values_in").fetchone()
    assert count == len(HOSTILE)


def test_the_engines_errors_come_out_as_one_class(connection):
    with pytest.raises(SparkEngineError, match="TABLE_OR_VIEW_NOT_FOUND"):
        connection.execute("select * from probe.not_there")


def test_timestamps_read_back_as_the_utc_instants_they_are_on_any_host_time_zone(connection):
    # GIVEN a host whose local time is New York's (pyspark converts to the host's zone)
    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    try:
        # WHEN a UTC instant is written as refill writes them (naive UTC) and read back
        instant = datetime(2026, 1, 2, 3, 4, 5)
        connection.execute("drop table if exists probe.instants")
        connection.execute("create table probe.instants (ts timestamp) using parquet")
        connection.execute("insert into probe.instants values (?)", [instant])

        # THEN it is the same instant, as is one made in SQL in the session's UTC
        assert connection.execute("select ts from probe.instants").fetchall() == [(instant,)]
        made = connection.execute("select timestamp'2026-01-02 03:04:05'").fetchone()
        assert made == (instant,)
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()
        connection.execute("drop table if exists probe.instants")
