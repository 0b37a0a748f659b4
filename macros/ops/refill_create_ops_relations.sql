{% macro refill_create_ops_relations() %}
    {{ return(adapter.dispatch('refill_create_ops_relations', 'refill')()) }}
{% endmacro %}

{% macro default__refill_create_ops_relations() %}
    {#--
        The ops relations, created before every run (on-run-start), with the columns of
        refill_ops_columns (their one home, shared with Spark's). They are not dbt
        models: they hold the history of runs, and a model's rebuild would erase it.
        Their rows are written by the models' post-hooks inside each model's own
        transaction, so a row here exists exactly when the data it describes does.
    --#}
    create schema if not exists ops;

    {#-- One row per model and partition: what is published now, and what produced it.
         No primary key: DuckDB checks keys eagerly and would refuse the delete and
         re-insert of one key inside one transaction; the audits keep it unique. --#}
    create table if not exists ops.partition_ledger ({{ refill_ops_columns_ddl('partition_ledger') }});
    {#-- What the partition read of the seeds (its day's reference fingerprint); added to
         warehouses created before it (their rows have none: stale until rebuilt). --#}
    alter table ops.partition_ledger add column if not exists reference_fingerprint varchar;

    {#-- Every attempt to build a day, by the flows: outcome and message. A failed attempt
         leaves the ledger as it was (rolled back); this is where the failure is kept. --#}
    create table if not exists ops.partition_attempts ({{ refill_ops_columns_ddl('partition_attempts') }});
    {#-- Which step failed (readiness | build | audit | publish | interrupted | lock | other;
         null when published), written by the flows from dbt's result; added to warehouses
         created before it. --#}
    alter table ops.partition_attempts add column if not exists failed_step varchar;

    {#-- Every command that writes: who ran what, with which parameters, and what it touched. --#}
    create table if not exists ops.run_log ({{ refill_ops_columns_ddl('run_log') }});

    {#-- Side effects, exactly once: a notification is a row first, keyed by its idempotency
         key; delivery marks it sent. A retry or rerun finds the key and sends nothing new. --#}
    create table if not exists ops.notification_outbox ({{ refill_ops_columns_ddl('notification_outbox') }});

    {#-- Which content each seed was last loaded with (refill_record_seed_load, a seed
         post-hook): the flows skip `dbt seed` when every seed holds its current content.
         A load without the flows' key (a plain `dbt seed` or `dbt build`) records none,
         so the next flow run reloads. --#}
    create table if not exists ops.seed_loads ({{ refill_ops_columns_ddl('seed_loads') }});
    {#-- The sha256 of the seed file each load read (the code version of what a model built
         from it holds); added to warehouses created before it. --#}
    alter table ops.seed_loads add column if not exists content_sha256 varchar;

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
