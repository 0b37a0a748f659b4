{#-
    One row per day of the window: the landing manifest and its readiness verdict.
    Building it is the readiness gate: a window with an unready day stops here,
    naming every such day, before any table downstream is touched.
-#}
{%- set window = refill_window() -%}
{%- set verdicts = refill_require_landing_ready('payments', window) -%}

with manifests as (
    {%- if verdicts | length == 0 %}
    {#-- Parsing: no verdicts yet; the same columns, no rows. --#}
    select
        null::date as landed_date,
        null::integer as manifest_files,
        null::bigint as manifest_records,
        null::varchar as exported_at,
        null::varchar as source_fingerprint,
        null::varchar[] as part_files
    where false
    {%- else %}
    select *
    from (
        values
        {%- for verdict in verdicts %}
        (
            date '{{ verdict.day }}',
            {{ verdict.manifest_files }},
            {{ verdict.manifest_records }},
            '{{ verdict.exported_at }}',
            '{{ verdict.source_fingerprint }}',
            [{% for part in verdict.part_files %}'{{ part }}'{{ "," if not loop.last }}{% endfor %}]::varchar[]
        ){{ "," if not loop.last }}
        {%- endfor %}
    ) as manifest_values (landed_date, manifest_files, manifest_records, exported_at, source_fingerprint, part_files)
    {%- endif %}
),

final as (
    select
        -- partition
        landed_date,

        -- manifest
        manifest_files::integer as manifest_files,
        manifest_records::bigint as manifest_records,
        source_fingerprint,
        part_files,

        -- timestamps
        strptime(exported_at, '%Y-%m-%dT%H:%M:%SZ') as exported_at
    from manifests
)

select * from final
