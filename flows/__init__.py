"""refill's Prefect flows: the daily run and the backfill, their tasks, the run lifecycle
they share, Prefect's signals and artifacts, and the temporary server. The only package
that imports Prefect; the decisions and the warehouse live in `refill`."""
