{#-
    Every landed line of one day (one microbatch batch), parsed, typed and classified:
    published, duplicate or quarantined with a reason. The read is refill's
    stg_payments__raw_lines for one folder (the batch's day picks it); the classification
    is refill's own macro (macro-paths in dbt_project.yml), the statement refill runs.
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
        string_split(content, chr(10)) as pieces
    from read_text('{{ landing }}/payments/dt={{ day }}/part-*.jsonl')
),

numbered as (
    select
        filename,
        len(pieces) as piece_count,
        generate_subscripts(pieces, 1) as line_number,
        unnest(pieces) as line_text
    from files
),

raw_lines as (
    select
        substr(filename, {{ landing | length + 2 }}) as file_name,
        date '{{ day }}' as landed_date,
        line_number,
        rtrim(line_text, chr(13)) as line_text
    from numbered
    where not (line_number = piece_count and line_text = '')
),

markets as (
    select * from {{ ref('markets') }}
),

currencies as (
    select distinct currency from {{ ref('fx_rates_daily') }}
),

classified as (
    {{ refill_classify_payment_lines('raw_lines', 'markets', 'currencies') }}
)

select * from classified
