{#-
    Every landed line of the window's part files, as text, with its file and line
    number. A view: read once, by stg_payments__lines, in the same run.
-#}
{%- set part_files = [] -%}
{%- if execute -%}
    {%- set listed = run_query(
        "select unnest(part_files) from " ~ ref('stg_payments__manifests') ~ " order by 1") -%}
    {%- do part_files.extend(listed.columns[0].values()) -%}
{%- endif -%}
{{ config(materialized='view') }}
-- depends_on: {{ ref('stg_payments__manifests') }}

with landed_lines as (
    {{ refill_read_landed_lines(part_files) }}
),

final as (
    select
        -- partition
        landed_date,

        -- where the line came from
        file_name,
        line_number,

        -- the line as landed
        line_text
    from landed_lines
)

select * from final
