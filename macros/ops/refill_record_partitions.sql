{% macro refill_record_partitions(manifests_model=none, upstream_model=none) %}
    {{ return(adapter.dispatch('refill_record_partitions', 'refill')(manifests_model, upstream_model)) }}
{% endmacro %}

{% macro default__refill_record_partitions(manifests_model=none, upstream_model=none) %}
    {#--
        Post-hook, last: stage the ledger rows of the chunk's partitions (the model's
        shadow ledger), after the audits passed. refill_publish moves them into
        ops.partition_ledger in the same transaction as the data, so the ledger can never
        claim a partition the data does not hold, nor miss one it does.
        Source fingerprint, reference fingerprint (what the day read of the seeds) and
        record counts come from the landing manifests model; a model built from another
        model's partitions (upstream_model, e.g. the revenue marts from fct_payments)
        takes them from that model's ledger rows as this invocation sees them
        (refill_chunk_ledger): the inputs its facts were built from, and their rows as its
        source records.
    --#}
    {%- set window = refill_window() -%}
    {%- set partition_column = config.require('partition_column') -%}
    {%- set manifests_model = manifests_model or (refill_dataset_model('manifests') if upstream_model is none) -%}
    {{ refill_fault_point('before_shadow_ledger') }}

    create or replace table {{ refill_shadow_relation(this, '__ledger') }} as
    with written as (
        select
            {{ partition_column }} as partition_date,
            count(*) as rows_written
        from {{ refill_shadow_relation(this) }}
        group by 1
    )

    select
        {{ refill_string_literal(this.identifier) }} as model_name,
        manifests.landed_date as partition_date,
        'published' as status,
        {{ refill_string_literal(refill_run_id()) }} as run_id,
        {{ refill_string_literal(refill_git_commit()) }} as git_commit,
        {{ refill_string_literal(refill_code_version()) }} as code_version,
        manifests.source_fingerprint,
        coalesce(written.rows_written, 0) as rows_written,
        manifests.manifest_records as source_records,
        {{ 'true' if var('refill_is_backfill') in (true, 'true') else 'false' }} as is_backfill,
        {{ refill_date_literal(window.start_date) }} as window_start,
        {{ refill_date_literal(window.end_date) }} as window_end,
        {#-- dbt's run start, not the database clock: when it was published, not which day. --#}
        {{ refill_run_started_at() }} as published_at,
        manifests.reference_fingerprint
    {%- if upstream_model %}
    from (
        select
            partition_date as landed_date,
            source_fingerprint,
            reference_fingerprint,
            rows_written as manifest_records
        from {{ refill_chunk_ledger(ref(upstream_model)) }}
    ) as manifests
    {%- else %}
    {# while parsing, the model's own `-- depends_on:` line names its manifests #}
    from {{ ref(manifests_model) if execute else 'manifests' }} as manifests
    {%- endif %}
    left join written
        on manifests.landed_date = written.partition_date
    where {{ refill_window_predicate('manifests.landed_date') }}
{% endmacro %}

{% macro spark__refill_record_partitions(manifests_model=none, upstream_model=none) %}
    {#-- Spark: the same ledger rows as default__refill_record_partitions (its query, one
         home), staged in a parquet table at the shadow ledger's folder: Spark has no
         `create or replace` for parquet tables, so the old one is dropped first. --#}
    {%- set staged = refill_shadow_relation(this, '__ledger') -%}
    {%- set default_sql = default__refill_record_partitions(manifests_model, upstream_model) -%}
    {%- set default_head = 'create or replace table ' ~ staged ~ ' as' -%}
    {%- if default_head not in default_sql -%}
        {{ exceptions.raise_compiler_error(
            "refill: spark__refill_record_partitions expects default__refill_record_partitions to start with `"
            ~ default_head ~ "`; keep the two in step") }}
    {%- endif -%}
    {%- if execute -%}{%- do run_query("drop table if exists " ~ staged) -%}{%- endif -%}
    {{ return(default_sql | replace(default_head,
        'create table ' ~ staged ~ ' using parquet location ' ~ refill_spark_location(staged) ~ ' as')) }}
{% endmacro %}
