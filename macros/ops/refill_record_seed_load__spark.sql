{% macro spark__refill_record_seed_load() %}
    {#-- Spark: parquet has no delete; the seed's load is appended and the latest row per
         seed wins (loaded_at is the invocation's start, microseconds). --#}
    insert into ops.seed_loads
    select
        {{ refill_string_literal(model.unique_id) }} as seed_id,
        {{ refill_string_literal(var('refill_seed_key')) if var('refill_seed_key', none) else 'null' }} as load_key,
        {{ refill_run_started_at() }} as loaded_at
{% endmacro %}
