"""Pure rules: no warehouse, no dbt, no Prefect, no clock."""
