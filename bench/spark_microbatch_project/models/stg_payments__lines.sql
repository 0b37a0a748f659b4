{#-
    Every landed line of one day (one microbatch batch), parsed, typed and classified:
    published, duplicate or quarantined with a reason. The batch's day picks the folder,
    read as bytes (binaryFile, as refill's spark__refill_read_landed_lines reads it, less
    the readiness verdict's sha256 check); splitting and classifying are refill's own row
    rules in their Spark spelling (macro-paths in dbt_project.yml).
-#}
{{ config(event_time='landed_date', partition_by=['landed_date']) }}

{%- set landing = env_var('REFILL_LANDING', 'data/landing') -%}
{%- if model.batch and model.batch.event_time_start -%}
    {%- set day = model.batch.event_time_start.strftime('%Y-%m-%d') -%}
{%- else -%}
    {%- set day = '1970-01-01' -%}
{%- endif -%}
{%- set files_view = 'bench_landed_files_' ~ day | replace('-', '') -%}
{%- if execute -%}
    {%- do run_query(
        "create or replace temporary view " ~ files_view ~ " using binaryFile options (path "
        ~ refill_string_literal(landing ~ '/payments/dt=' ~ day ~ '/part-*.jsonl') ~ ")") -%}
{%- endif %}

with files as (
    select
        substring_index(path, '/', -3) as file_name,
        content
    from {{ files_view }}
),

raw_lines as (
    {{ spark__refill_split_landed_lines('files') }}
),

markets as (
    select * from {{ ref('markets') }}
),

currencies as (
    select distinct currency from {{ ref('fx_rates_daily') }}
),

classified as (
    {{ refill_classify_landed_lines('raw_lines', var('refill_rule')) }}
)

select * from classified
