"""The one boundary to the engine: connections, the lock protocol, ops relations, dbt."""
