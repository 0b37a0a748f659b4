{% macro refill_window_manifests() %}
    {#-- stg_payments__manifests for the window, computed from the landing for a command
         that does not build it (refill_work_relation): the readiness gate (every day of the
         window ready, or one line naming the days), then the verdicts' rows. --#}
    {%- set window = refill_window() -%}
    {%- do refill_require_landing_ready('payments', window) -%}
    select
        day as landed_date,
        cast(manifest_files as integer) as manifest_files,
        manifest_records,
        source_fingerprint,
        part_files,
        exported_at
    from ({{ refill_landed_manifests('payments', window) }}) as verdicts
    where is_ready
{% endmacro %}
