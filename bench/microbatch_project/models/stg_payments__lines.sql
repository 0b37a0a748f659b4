{#-
    Every landed line of one day (one microbatch batch), parsed, typed and classified:
    published, duplicate or quarantined with a reason. The batch's day picks the folder;
    splitting the files into lines and classifying them are refill's own row rules
    (macro-paths in dbt_project.yml), the statements refill runs.
-#}
{{ config(event_time='landed_date') }}

{%- set landing = env_var('REFILL_LANDING', 'data/landing') -%}
{%- if model.batch and model.batch.event_time_start -%}
    {%- set day = model.batch.event_time_start.strftime('%Y-%m-%d') -%}
{%- else -%}
    {%- set day = '1970-01-01' -%}
{%- endif %}

with files as (
    select
        filename,
        content
    from read_blob('{{ landing }}/payments/dt={{ day }}/part-*.jsonl')
),

raw_lines as (
    {{ refill_split_landed_lines('files', landing) }}
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
