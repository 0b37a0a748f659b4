{% macro refill_record_seed_load() %}
    {{ return(adapter.dispatch('refill_record_seed_load', 'refill')()) }}
{% endmacro %}

{% macro default__refill_record_seed_load() %}
    {#--
        Seed post-hook, inside the seed's load transaction: record the key of the content
        it was loaded with, given by the flows as var refill_seed_key (a hash of the
        seeds, their config and the on-run-start DDL; flows/dbt.py:seed_load_key). A row
        with the current key means the seed needs no reload; a load without the var
        records no key, so the next flow run reloads rather than trust it.
    --#}
    delete from ops.seed_loads where seed_id = {{ refill_string_literal(model.unique_id) }};

    insert into ops.seed_loads
    select
        {{ refill_string_literal(model.unique_id) }} as seed_id,
        {{ refill_string_literal(var('refill_seed_key')) if var('refill_seed_key', none) else 'null' }} as load_key,
        {{ refill_run_started_at() }} as loaded_at
{% endmacro %}
