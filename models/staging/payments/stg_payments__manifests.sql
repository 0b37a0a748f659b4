{#-
    One row per day of the window: the landing manifest and its readiness verdict, and
    the day's reference fingerprint (what it reads of the seeds): the day's inputs, which
    its ledger rows record. Building it is the readiness gate: a window with an unready
    day stops here, naming every such day, before any table downstream is touched. The
    verdicts are data the engine reads (refill_landed_manifests), never values pasted
    into SQL.
-#}
{%- set window = refill_window() -%}
{%- set checked = refill_require_landing_ready('payments', window) -%}
{#- The landing is read through the readiness rule above, never as a relation: this line
    makes it the model's parent in dbt's lineage (docs, `--select source:payments+`). #}
-- depends_on: {{ source('payments', 'manifests') }}
{#- The seeds the dataset declares it reads (refill_landed_reference): a build loads them
    before this model, so the fingerprints it records are those of the rows loaded. #}
-- depends_on: {{ ref('fx_rates_daily') }}
-- depends_on: {{ ref('markets') }}

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

reference as (
    {%- if checked | length == 0 %}
    select
        null::date as day,
        null::varchar as reference_fingerprint
    where false
    {%- else %}
    {{ refill_landed_reference('payments', window) }}
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
        ready.day as landed_date,

        -- manifest (a ready day's file count is the files found: small)
        ready.manifest_files::integer as manifest_files,
        ready.manifest_records,
        ready.source_fingerprint,
        ready.part_files,

        -- what the day reads of the seeds
        reference.reference_fingerprint,

        -- timestamps
        ready.exported_at
    from ready
    inner join reference on ready.day = reference.day
)

select * from final
