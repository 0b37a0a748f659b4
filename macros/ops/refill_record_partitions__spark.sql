{% macro spark__refill_record_partitions(manifests_model='stg_payments__manifests', upstream_model=none) %}
    {#-- Spark: the same ledger rows as default__refill_record_partitions (its query, one
         home), staged in a parquet table at the shadow ledger's folder: Spark has no
         `create or replace` for parquet tables, so the old one is dropped first. --#}
    {%- set staged = refill_shadow_relation(this, '__ledger') -%}
    {%- set default_sql = default__refill_record_partitions(manifests_model, upstream_model) -%}
    {%- set default_head = 'create or replace table ' ~ staged ~ ' as' -%}
    {%- if default_head not in default_sql -%}
        {{ exceptions.raise_compiler_error(
            "refill: spark__refill_record_partitions expects default__refill_record_partitions to start with `"
            ~ default_head ~ "`; keep the two in step") }}
    {%- endif -%}
    {%- if execute -%}{%- do run_query("drop table if exists " ~ staged) -%}{%- endif -%}
    {{ return(default_sql | replace(default_head,
        'create table ' ~ staged ~ ' using parquet location ' ~ refill_spark_location(staged) ~ ' as')) }}
{% endmacro %}
