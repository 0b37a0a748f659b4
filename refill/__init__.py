"""refill: safe backfills and reruns of partitioned data (the Python side).

Layers, each importing only those below it: `cli` (the command line) over `flows/`
(the Prefect flows) over `views` (status, board, reports) over `warehouse` (the one
boundary to the engine and dbt) over `rules` (pure decisions) over `settings`/`errors`.
"""
