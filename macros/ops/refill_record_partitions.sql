{% macro refill_record_partitions(manifests_model='stg_payments__manifests', upstream_model=none) %}
    {#--
        Post-hook, last: replace the ledger rows of the window's partitions of this
        model, inside the model's transaction, after the audits passed. The ledger can
        then never claim a partition the data does not hold, nor miss one it does.
        Source fingerprint and record counts come from the landing manifests; a model
        built from another model's partitions (upstream_model, e.g. the revenue marts
        from fct_payments) takes them from that model's ledger rows instead: the landing
        fingerprint its facts were built from, and their rows as its source records.
        It then needs no staging model, so it can be rebuilt alone.
    --#}
    {%- set window = refill_window() -%}
    {%- set partition_column = config.require('partition_column') -%}
    {{ refill_fault_point('before_ledger') }}

    delete from ops.partition_ledger
    where model_name = '{{ this.identifier }}'
        and {{ refill_window_predicate('partition_date') }};

    insert into ops.partition_ledger
    with written as (
        select
            {{ partition_column }} as partition_date,
            count(*) as rows_written
        from {{ this }}
        where {{ refill_window_predicate(partition_column) }}
        group by 1
    )

    select
        '{{ this.identifier }}' as model_name,
        manifests.landed_date as partition_date,
        'published' as status,
        '{{ refill_run_id() }}' as run_id,
        '{{ refill_git_commit() }}' as git_commit,
        '{{ refill_code_version() }}' as code_version,
        manifests.source_fingerprint,
        coalesce(written.rows_written, 0) as rows_written,
        manifests.manifest_records as source_records,
        {{ 'true' if var('refill_is_backfill') else 'false' }} as is_backfill,
        date '{{ window.start_date }}' as window_start,
        date '{{ window.end_date }}' as window_end,
        {#-- dbt's run start, not the database clock: when it was published, not which day. --#}
        {{ refill_run_started_at() }} as published_at
    {%- if upstream_model %}
    from (
        select
            partition_date as landed_date,
            source_fingerprint,
            rows_written as manifest_records
        from ops.partition_ledger
        where model_name = '{{ ref(upstream_model).identifier }}'
            and status = 'published'
    ) as manifests
    {%- else %}
    from {{ ref(manifests_model) }} as manifests
    {%- endif %}
    left join written
        on manifests.landed_date = written.partition_date
    where {{ refill_window_predicate('manifests.landed_date') }}
{% endmacro %}
