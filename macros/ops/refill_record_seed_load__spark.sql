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
