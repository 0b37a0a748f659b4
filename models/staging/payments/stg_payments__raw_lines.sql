{#-
    Every landed line of the window's part files, as text, with its file and line
    number, and whether its bytes were valid UTF-8. Ephemeral: the lines are read in
    stg_payments__lines's own statement, once, through the descriptors the readiness
    check opened (refill_read_landed_lines), so nothing persists a path to them.
-#}
{{ config(materialized='ephemeral') }}
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
