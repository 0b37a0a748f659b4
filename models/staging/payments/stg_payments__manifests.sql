{#-
    One row per day of the window: the landing manifest and its readiness verdict.
    Building it is the readiness gate: a window with an unready day stops here,
    naming every such day, before any table downstream is touched. The verdicts are
    data the engine reads (refill_landed_manifests), never values pasted into SQL.
-#}
{%- set window = refill_window() -%}
{%- set checked = refill_require_landing_ready('payments', window) -%}
{#- The landing is read through the readiness rule above, never as a relation: this line
    makes it the model's parent in dbt's lineage (docs, `--select source:payments+`). #}
-- depends_on: {{ source('payments', 'manifests') }}

with verdicts as (
    {%- if checked | length == 0 %}
    {#-- Parsing: nothing checked yet; the same columns, no rows. --#}
    select
        null::date as day,
        null::boolean as is_ready,
        null::varchar as reason,
        null::varchar[] as part_files,
        null::bigint as manifest_files,
        null::bigint as manifest_records,
        null::timestamp as exported_at,
        null::varchar as source_fingerprint
    where false
    {%- else %}
    {{ refill_landed_manifests('payments', window) }}
    {%- endif %}
),

ready as (
    -- the gate again, on the verdicts this statement read: a day that stopped being
    -- ready after the check above stops the run here instead
    select *
    from verdicts
    where
        case
            when is_ready then true
            else error(
                'refill readiness: ' || day || ' of payments not ready (' || reason
                || '), nothing written. Wait for the export, or choose a window without it.'
            )
        end
),

final as (
    select
        -- partition
        day as landed_date,

        -- manifest (a ready day's file count is the files found: small)
        manifest_files::integer as manifest_files,
        manifest_records,
        source_fingerprint,
        part_files,

        -- timestamps
        exported_at
    from ready
)

select * from final
