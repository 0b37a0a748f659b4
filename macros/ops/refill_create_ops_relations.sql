{% macro refill_create_ops_relations() %}
    {{ return(adapter.dispatch('refill_create_ops_relations', 'refill')()) }}
{% endmacro %}

{% macro default__refill_create_ops_relations() %}
    {#--
        The ops relations, created before every run (on-run-start). They are not dbt
        models: they hold the history of runs, and a model's rebuild would erase it.
        Their rows are written by the models' post-hooks inside each model's own
        transaction, so a row here exists exactly when the data it describes does.
    --#}
    create schema if not exists ops;

    {#-- One row per model and partition: what is published now, and what produced it.
         No primary key: DuckDB checks keys eagerly and would refuse the delete and
         re-insert of one key inside one transaction; the audits keep it unique. --#}
    create table if not exists ops.partition_ledger (
        model_name varchar not null,
        partition_date date not null,
        status varchar not null,
        run_id varchar not null,
        git_commit varchar not null,
        code_version varchar not null,
        source_fingerprint varchar,
        rows_written bigint not null,
        source_records bigint,
        is_backfill boolean not null,
        window_start date not null,
        window_end date not null,
        published_at timestamp not null
    );

    {#-- Every attempt to build a day, by the flows: outcome and message. A failed attempt
         leaves the ledger as it was (rolled back); this is where the failure is kept. --#}
    create table if not exists ops.partition_attempts (
        run_id varchar not null,
        command varchar not null,
        partition_date date not null,
        chunk_start date not null,
        chunk_end date not null,
        attempt integer not null,
        outcome varchar not null,
        message varchar,
        started_at timestamp not null,
        ended_at timestamp not null,
        failed_step varchar
    );
    {#-- Which step failed (readiness | build | audit | publish | interrupted | lock | other;
         null when published), written by the flows from dbt's result; added to warehouses
         created before it. --#}
    alter table ops.partition_attempts add column if not exists failed_step varchar;

    {#-- Every command that writes: who ran what, with which parameters, and what it touched. --#}
    create table if not exists ops.run_log (
        run_id varchar not null,
        command varchar not null,
        command_line varchar not null,
        parameters json,
        user_name varchar,
        host varchar,
        started_at timestamp not null,
        ended_at timestamp,
        outcome varchar not null,
        partitions_touched date[],
        message varchar
    );

    {#-- Side effects, exactly once: a notification is a row first, keyed by its idempotency
         key; delivery marks it sent. A retry or rerun finds the key and sends nothing new. --#}
    create table if not exists ops.notification_outbox (
        idempotency_key varchar primary key,
        flow_name varchar not null,
        logical_date date,
        outcome varchar not null,
        code_version varchar,
        message varchar not null,
        created_at timestamp not null,
        sent_at timestamp,
        delivery_attempts integer not null default 0,
        last_error varchar
    );

    {#-- Which content each seed was last loaded with (refill_record_seed_load, a seed
         post-hook): the flows skip `dbt seed` when every seed holds its current content.
         A load without the flows' key (a plain `dbt seed` or `dbt build`) records none,
         so the next flow run reloads. --#}
    create table if not exists ops.seed_loads (
        seed_id varchar not null,
        load_key varchar,
        loaded_at timestamp not null
    );

    {#-- Per model: the last day up to which every partition since the first is published,
         and when that was. What a dashboard can print as "data as of". --#}
    create or replace view ops.data_as_of as
    with islands as (
        select
            model_name,
            partition_date,
            published_at,
            partition_date - cast(row_number() over (
                partition by model_name order by partition_date
            ) as integer) as island
        from ops.partition_ledger
        where status = 'published'
    ),

    first_islands as (
        select
            model_name,
            island,
            min(partition_date) as first_partition,
            max(partition_date) as complete_through,
            max(published_at) as published_at,
            row_number() over (partition by model_name order by min(partition_date)) as island_rank
        from islands
        group by model_name, island
    )

    select
        model_name,
        first_partition,
        complete_through as data_as_of,
        published_at
    from first_islands
    where island_rank = 1;
{% endmacro %}
