{#-
    Every landed line of the window's part files, as text, with its file and line
    number, and whether its bytes were valid UTF-8. A view: read once, by
    stg_payments__lines, in the same run.
-#}
{{ config(materialized='view') }}
{#- The files are read by refill_read_landed_lines, only the window's ready days; this
    line makes the landing the model's parent in dbt's lineage. #}
-- depends_on: {{ source('payments', 'part_files') }}

with landed_lines as (
    {{ refill_read_landed_lines(refill_window_part_files(ref('stg_payments__manifests'))) }}
),

final as (
    select
        -- partition
        landed_date,

        -- where the line came from
        file_name,
        line_number,

        -- the line as landed
        line_text,
        is_valid_utf8
    from landed_lines
)

select * from final
