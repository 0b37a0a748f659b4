{% macro refill_window_manifests(dataset, as_the_model=false) %}
    {#--
        The one query of a dataset's manifests model (stg_<dataset>__manifests): one row
        per day of the window, its landing manifest, readiness verdict and reference
        fingerprint, in the model's columns and order. The model is this query; a command that reads the model without
        building it (refill_work_relation) computes the same rows from the landing.
        The gate runs twice: here in Jinja over every day of the window (one line naming
        every unready day, before anything runs), and again in SQL over the verdicts the
        statement itself reads, so a day that stopped being ready in between stops the
        run instead of being dropped. A window no one named (no vars) reads its ready days:
        the days the Jinja gate found unready are left out of both.
        A command that only renders SQL (compile, docs generate) checks no day: the model
        itself renders its query, and a node reading it gets no rows, so nothing it renders
        (the line reader's file list) reads the landing.
    --#}
    {%- set window = refill_window() -%}
    {%- set renders_only = execute and refill_command_renders_only() -%}
    {%- set checked = refill_require_landing_ready(dataset, window) -%}
    {%- if checked | length == 0 and not (renders_only and as_the_model) -%}
        {#-- parsing (nothing checked yet), rendered for a reader, or no ready day: the same
             columns, no rows --#}
        {{ return(refill_window_manifests_columns()) }}
    {%- endif -%}
    {%- set left_out = [] -%}
    {%- if window.get('ready_days_only') and not renders_only -%}
        {%- set ready_days = checked | map(attribute='day') | map('string') | list -%}
        {%- for offset in range(window.days) -%}
            {%- set day = window.start_date + modules.datetime.timedelta(days=offset) -%}
            {%- if day.isoformat() not in ready_days -%}
                {%- do left_out.append(refill_date_literal(day)) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {#- as the model: refill_landed_reference checks that the model depends on every seed
        it reads; read by another node (a mart), that check is the model's, so the
        dispatched query itself (the plugin still refuses a seed file the warehouse has
        not loaded) -#}
    {%- if as_the_model -%}
        {%- set reference_query = refill_landed_reference(dataset, window) -%}
    {%- else -%}
        {%- set reference_query = adapter.dispatch('refill_landed_reference', 'refill')(
            dataset, window, refill_dataset_reference(dataset)) -%}
    {%- endif -%}
    {%- set query -%}
    with verdicts as (
        {{ refill_landed_manifests(dataset, window) }}
    ),

    reference as (
        {{ reference_query }}
    ),

    ready as (
        select *
        from verdicts
        where
            {%- if left_out %}
            day not in ({{ left_out | join(', ') }}) and
            {%- endif %}
            case
                when is_ready then true
                else error(
                    'refill readiness: ' || day || ' of ' || {{ refill_string_literal(dataset) }}
                    || ' not ready (' || reason || '), nothing written. Wait for the export, or choose a window without it.'
                )
            end
    )

    select
        -- partition
        ready.day as landed_date,

        -- manifest (a ready day's file count is the files found: small)
        cast(ready.manifest_files as integer) as manifest_files,
        ready.manifest_records,
        ready.source_fingerprint,
        ready.part_files,

        -- what the day reads of the seeds
        reference.reference_fingerprint,

        -- timestamps
        ready.exported_at
    from ready
    inner join reference on ready.day = reference.day
    {%- endset -%}
    {{ return(query) }}
{% endmacro %}

{% macro refill_window_manifests_columns() %}
    {#-- stg_payments__manifests' columns with no rows (run, not only rendered, when a
         command that renders SQL reads the part files of no day) --#}
    {{ return(adapter.dispatch('refill_window_manifests_columns', 'refill')()) }}
{% endmacro %}

{% macro default__refill_window_manifests_columns() %}
    {%- set query -%}
    select
        null::date as landed_date,
        null::integer as manifest_files,
        null::bigint as manifest_records,
        null::varchar as source_fingerprint,
        null::varchar[] as part_files,
        null::varchar as reference_fingerprint,
        null::timestamp as exported_at
    where false
    {%- endset -%}
    {{ return(query) }}
{% endmacro %}

{% macro spark__refill_window_manifests_columns() %}
    {%- set query -%}
    select
        cast(null as date) as landed_date,
        cast(null as int) as manifest_files,
        cast(null as bigint) as manifest_records,
        cast(null as string) as source_fingerprint,
        cast(null as array<string>) as part_files,
        cast(null as string) as reference_fingerprint,
        cast(null as timestamp) as exported_at
    from (select 1 as one) as no_day
    where false
    {%- endset -%}
    {{ return(query) }}
{% endmacro %}
