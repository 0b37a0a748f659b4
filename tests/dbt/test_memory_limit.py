"""dbt's DuckDB sessions get refill's memory limit (the dbt plugin, on every path): a big
day spills to disk instead of growing with the day (docs/performance.md, a big day)."""

from __future__ import annotations

import duckdb
import pytest

from refill import settings
from refill.errors import RefillError
from refill.warehouse.dbt_plugin import limit_memory


def memory_limit(connection) -> str:
    return connection.execute("select current_setting('memory_limit')").fetchone()[0]


def test_the_default_limit_is_set(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(settings.DUCKDB_MEMORY_LIMIT_ENV, raising=False)
    with duckdb.connect() as connection, duckdb.connect() as reference:
        reference.execute("set memory_limit = ?", [settings.DEFAULT_DUCKDB_MEMORY_LIMIT])
        limit_memory(connection)
        assert memory_limit(connection) == memory_limit(reference)


def test_an_empty_setting_keeps_duckdb_s_default(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(settings.DUCKDB_MEMORY_LIMIT_ENV, "")
    with duckdb.connect() as connection, duckdb.connect() as untouched:
        limit_memory(connection)
        assert memory_limit(connection) == memory_limit(untouched)


@pytest.mark.parametrize("value", ["lots", "1GB; drop table x", "-1GB", "1 G B"])
def test_a_limit_that_is_not_a_size_is_refused_by_name(monkeypatch, value):
    monkeypatch.setenv(settings.DUCKDB_MEMORY_LIMIT_ENV, value)
    with pytest.raises(RefillError, match=settings.DUCKDB_MEMORY_LIMIT_ENV):
        settings.duckdb_memory_limit()
