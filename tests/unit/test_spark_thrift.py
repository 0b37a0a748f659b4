"""refill's statements over a cluster's Thrift Server (refill.warehouse.spark_thrift), without a
cluster: a fake PyHive connection answers the catalog queries. On a cluster every client
shares one metastore, so what refill lists is what every running chunk is writing too."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from refill.errors import RefillError
from refill.warehouse import spark_thrift
from refill.warehouse.spark_engine import SparkEngineError
from refill.warehouse.spark_thrift import ThriftStatements


class EngineSaid(Exception):
    """What PyHive raises: the server's response, with its status, as the first argument."""

    def __init__(self, message: str):
        status = type("Status", (), {"errorMessage": message})()
        super().__init__(type("Response", (), {"status": status})())


class FakeCursor:
    def __init__(self, answers):
        self.answers = answers
        self.asked: list[str] = []
        self.description = None
        self._rows: list[tuple] = []

    def execute(self, sql: str):
        self.asked.append(sql)
        answer = self.answers(sql)
        if isinstance(answer, Exception):
            raise answer
        self.description, self._rows = answer

    def fetchall(self):
        return self._rows


class FakeConnection:
    def __init__(self, answers):
        self.cursor_ = FakeCursor(answers)

    def cursor(self):
        return self.cursor_

    def close(self):
        pass


STRING = ("x", "STRING_TYPE")


def catalog_of_a_cluster_where_another_chunk_drops_a_table(sql: str):
    """main holds a table and one that is dropped between the listing and its description
    (another client dropped it); wap holds another chunk's shadow, mid-write."""
    if sql == "show databases":
        return [STRING], [("main",), ("wap",), ("staging",)]
    if sql.startswith("show views in"):
        return [STRING, STRING, STRING], []
    if sql == "show tables in `main`":
        return [STRING] * 3, [("main", "kept", False), ("main", "gone", False)]
    if sql == "show tables in `wap`":
        return [STRING] * 3, [("wap", "main__fct_payments__20260101_20260102", False)]
    if sql == "show tables in `staging`":
        return [STRING] * 3, [("staging", "stg_payments__lines__20260101_20260102", False)]
    if sql == "describe table `main`.`kept`":
        return [STRING] * 3, [("id", "bigint", None), ("event_date", "date", None)]
    if sql.startswith("describe table"):
        return EngineSaid(f"[TABLE_OR_VIEW_NOT_FOUND] {sql[15:]} cannot be found")
    raise AssertionError(sql)


def test_the_catalog_lists_what_refill_reads_while_other_chunks_write_theirs():
    # GIVEN a cluster where another chunk writes its shadows and work tables, and drops a
    # table of main between refill's listing and its description
    connection = FakeConnection(catalog_of_a_cluster_where_another_chunk_drops_a_table)
    statements = ThriftStatements(connection, "/locks")

    # WHEN refill reads the catalog with its columns (information_schema's stand-in)
    tables, columns = statements.catalog(with_columns=True)

    # THEN it lists the relations refill reads, never describes a chunk's private work
    # tables, and a table dropped meanwhile is simply not there
    assert tables == [("main", "kept", "BASE TABLE")]
    assert columns == [
        ("main", "kept", "id", "BIGINT", 1),
        ("main", "kept", "event_date", "DATE", 2),
    ]
    asked = connection.cursor_.asked
    assert not any("`wap`.`" in sql or "`staging`.`" in sql for sql in asked), asked


def test_the_engines_other_errors_still_fail_with_its_message():
    def answers(sql: str):
        if sql == "show databases":
            return [STRING], [("main",)]
        if sql.startswith("show views"):
            return [STRING] * 3, []
        if sql.startswith("show tables"):
            return [STRING] * 3, [("main", "t", False)]
        return EngineSaid("[INSUFFICIENT_PERMISSIONS] no")

    statements = ThriftStatements(FakeConnection(answers), "/locks")
    with pytest.raises(SparkEngineError, match="INSUFFICIENT_PERMISSIONS"):
        statements.catalog(with_columns=True)


def test_values_come_back_in_the_types_refill_reads():
    def answers(sql: str):
        types = [
            ("d", "DATE_TYPE"),
            ("a", "ARRAY_TYPE"),
            ("n", "DECIMAL_TYPE"),
            ("s", "STRING_TYPE"),
        ]
        return types, [
            ("2026-02-03", '["2026-02-03"]', Decimal("1.50"), "x"),
            (None, None, None, None),
        ]

    rows = ThriftStatements(FakeConnection(answers), "/locks").sql("select ...")
    assert rows == [
        (date(2026, 2, 3), ["2026-02-03"], Decimal("1.50"), "x"),
        (None, None, None, None),
    ]


@pytest.mark.parametrize("port", ["", "0", "65536", "10000; rm", "x"])
def test_a_port_that_is_not_one_is_refused_in_one_line(port, monkeypatch):
    monkeypatch.setenv(spark_thrift.PORT_ENV, port)
    with pytest.raises(RefillError, match="REFILL_SPARK_PORT=.* is not a port number"):
        spark_thrift.address()
