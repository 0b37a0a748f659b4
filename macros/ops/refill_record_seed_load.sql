{% macro refill_record_seed_load() %}
    {{ return(adapter.dispatch('refill_record_seed_load', 'refill')()) }}
{% endmacro %}

{% macro default__refill_record_seed_load() %}
    {#--
        Seed post-hook, inside the seed's load transaction: record the key the flows gave
        (var refill_seed_key: a hash of the seeds' contents, their config and the
        on-run-start DDL; refill/warehouse/dbt_runner.py:seed_load_key), and the sha256 of
        the file the load read (refill_file_sha256, the dbt plugin's: the seed's content
        key, whatever its size; dbt's own checksum of a seed over 1 MiB is its path). A row
        with the current key means the seed needs no reload; a load without the var records
        no key, so the next flow run reloads rather than trust it. The content key is what
        the code version of a model built from this load names (refill_code_version).
    --#}
    delete from ops.seed_loads where seed_id = {{ refill_string_literal(model.unique_id) }};

    insert into ops.seed_loads (seed_id, load_key, loaded_at, content_sha256)
    select
        {{ refill_string_literal(model.unique_id) }} as seed_id,
        {{ refill_string_literal(var('refill_seed_key')) if var('refill_seed_key', none) else 'null' }} as load_key,
        {{ refill_run_started_at() }} as loaded_at,
        refill_file_sha256({{ refill_string_literal(refill_seed_file(model)) }}) as content_sha256
{% endmacro %}

{% macro refill_seed_file(seed) %}
    {#-- The seed's file: dbt reads it from the seed's root path (its project's folder). --#}
    {{ return(seed.root_path ~ '/' ~ seed.original_file_path) }}
{% endmacro %}
