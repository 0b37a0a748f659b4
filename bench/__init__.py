"""The backfill benchmark: refill against dbt microbatch, the raw DuckDB floor and a naive
per-day loop, on the same landing data (`python -m bench.run`, docs/performance.md)."""
