{% macro refill_window_manifests() %}
    {#-- stg_payments__manifests for the window, computed from the landing for a command
         that does not build it (refill_work_relation): the readiness gate (every day of the
         window ready, or one line naming the days), then the verdicts' rows with each day's
         reference fingerprint: the model's columns, in its order. --#}
    {%- set window = refill_window() -%}
    {%- do refill_require_landing_ready('payments', window) -%}
    {#- the dispatched query itself: the depends_on check of refill_landed_reference is the
        staging model's (the calling node here is a mart); the plugin still refuses a seed
        file the warehouse has not loaded -#}
    {%- set declared = refill_dataset_reference('payments') -%}
    select
        verdicts.day as landed_date,
        cast(verdicts.manifest_files as integer) as manifest_files,
        verdicts.manifest_records,
        verdicts.source_fingerprint,
        verdicts.part_files,
        reference.reference_fingerprint,
        verdicts.exported_at
    from ({{ refill_landed_manifests('payments', window) }}) as verdicts
    inner join (
        {{ adapter.dispatch('refill_landed_reference', 'refill')('payments', window, declared) }}
    ) as reference on verdicts.day = reference.day
    where verdicts.is_ready
{% endmacro %}
