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
    {#-- The seed's file, absolute (the engine opens it: a cluster in its own folder). A seed
         of this project is found in its folder (refill_project_path: a node's root_path is
         the one partial parsing kept, perhaps another run's folder); a package's in its own. --#}
    {%- if seed.package_name == project_name -%}
        {{ return(refill_project_path(seed.original_file_path)) }}
    {%- endif -%}
    {{ return(seed.root_path ~ '/' ~ seed.original_file_path) }}
{% endmacro %}

{% macro spark__refill_record_seed_load() %}
    {#-- Spark: parquet has no delete; the seed's load is appended and the latest row per
         seed wins (loaded_at is the invocation's start, microseconds). The file's sha256
         is Spark's sha2 of its bytes (binaryFile), read through a temporary view whose
         path is one string literal: a project folder Spark would read as a pattern is
         refused, as the landing root is (spark__refill_read_landed_lines). --#}
    {%- set path = refill_seed_file(model) -%}
    {%- if modules.re.search('[*?\\[\\]{},\\\\]', path) -%}
        {{ exceptions.raise_compiler_error(
            "refill input: the seed file " ~ tojson(path) ~ " holds a glob character; move the project to a plain folder path") }}
    {%- endif -%}
    {%- if execute -%}
        {%- do run_query("create or replace temporary view refill_seed_file using binaryFile options (path "
            ~ refill_string_literal(path) ~ ")") -%}
    {%- endif -%}
    insert into ops.seed_loads
    select
        {{ refill_string_literal(model.unique_id) }} as seed_id,
        {{ refill_string_literal(var('refill_seed_key')) if var('refill_seed_key', none) else 'null' }} as load_key,
        {{ refill_run_started_at() }} as loaded_at,
        (select sha2(content, 256) from refill_seed_file) as content_sha256
{% endmacro %}
