"""refill: safe backfills and reruns of partitioned data (the Python side).

The decisions live in pure modules (`window`, `readiness`, `planning`, ...);
flows and the command line stay thin layers that call them and dbt.
"""
