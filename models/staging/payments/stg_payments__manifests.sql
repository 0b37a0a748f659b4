{#-
    One row per day of the window: the landing manifest and its readiness verdict.
    Building it is the readiness gate: a window with an unready day stops here,
    naming every such day, before any table downstream is touched. The verdicts are
    data the engine reads (refill_landed_manifests), never values pasted into SQL.
-#}
{%- set window = refill_window() -%}
{%- do refill_require_landing_ready('payments', window) -%}

with verdicts as (
    {{ refill_landed_manifests('payments', window) }}
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

        -- manifest
        manifest_files,
        manifest_records,
        source_fingerprint,
        part_files,

        -- timestamps
        exported_at
    from ready
)

select * from final
