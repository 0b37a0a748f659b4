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
    {#-- Which run is delivering a row, since when (notify.claim_pending): two runs
         delivering at once never both send it; added to warehouses created before it. --#}
    alter table ops.notification_outbox add column if not exists claimed_by varchar;
    alter table ops.notification_outbox add column if not exists claimed_at timestamp;

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

{% macro spark__refill_create_ops_relations() %}
    {#--
        Spark (on-run-start): the same ops relations as parquet tables, each external at
        its folder (refill_spark_location). On the `spark` target the catalog lives in this
        process's memory, so every invocation registers them again from their folders, and
        with them the seeds and published models a previous process wrote (known from
        ops.seed_loads and the ledger), and tells dbt's cache; a cluster's metastore
        (`spark-cluster`) keeps them, and only the missing ones are created. Spark's parquet tables have no delete or update:
        the ledger is partitioned by (model_name, partition_date) and replaced per day by a
        dynamic overwrite (spark__refill_publish); the other logs are append-only, read
        latest row wins. Runs its statements itself (Spark takes one per call); renders
        nothing.
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set ops = api.Relation.create(schema='ops', identifier='partition_ledger', type='table') -%}

    {%- do refill_session_functions() -%}

    {%- do refill_spark_register(api.Relation.create(schema='ops', identifier='partition_ledger', type='table'),
        refill_ops_columns_ddl('partition_ledger', spark=true, last=['model_name', 'partition_date']),
        'model_name, partition_date') -%}
    {%- do refill_spark_register(api.Relation.create(schema='ops', identifier='partition_attempts', type='table'),
        refill_ops_columns_ddl('partition_attempts', spark=true)) -%}
    {%- do refill_spark_register(api.Relation.create(schema='ops', identifier='run_log', type='table'),
        refill_ops_columns_ddl('run_log', spark=true)) -%}
    {%- do refill_spark_register(api.Relation.create(schema='ops', identifier='notification_outbox', type='table'),
        refill_ops_columns_ddl('notification_outbox', spark=true)) -%}
    {#-- The outbox's claim (notify.claim_pending), added to a table a metastore kept from
         before it: Spark has no `add column if not exists`, so look first. --#}
    {%- set outbox_columns = run_query("describe ops.notification_outbox").columns[0].values() -%}
    {%- if 'claimed_by' not in outbox_columns -%}
        {%- do run_query(
            "alter table ops.notification_outbox add columns (claimed_by string, claimed_at timestamp)") -%}
    {%- endif -%}
    {%- do refill_spark_register(api.Relation.create(schema='ops', identifier='seed_loads', type='table'),
        refill_ops_columns_ddl('seed_loads', spark=true)) -%}
    {%- do run_query("refresh table ops.partition_ledger") -%}
    {%- do run_query("refresh table ops.seed_loads") -%}

    {#-- With a catalog that outlives the process (a cluster's metastore) the tables are
         there already: nothing is registered again from folders. --#}
    {%- if run_query("set spark.sql.catalogImplementation").columns[1].values()[0] == 'hive' -%}
        {%- do refill_spark_run_view_ddl(
        "create or replace view ops.data_as_of as " ~ refill_spark_data_as_of_sql()) -%}
        {{ return('') }}
    {%- endif -%}

    {#-- What a previous process published or loaded: registered from its files. A model
         whose every published day is empty has no data file to read its columns from (an
         empty day's overwrite writes none): registering it failed the next process with
         UNABLE_TO_INFER_SCHEMA, so it is left to this invocation's publish, which registers
         it with its shadow's columns (there are no rows to keep). --#}
    {%- set published = run_query(
        "select distinct model_name from ops.partition_ledger where rows_written > 0").columns[0].values() -%}
    {%- set loaded = run_query("select distinct seed_id from ops.seed_loads").columns[0].values() -%}
    {%- for node in graph.nodes.values() -%}
        {%- if (node.resource_type == 'model' and node.config.materialized == 'partitioned'
                and (node.alias or node.name) in published)
            or (node.resource_type == 'seed' and node.unique_id in loaded) -%}
            {%- do refill_spark_register(refill_node_relation(node)) -%}
            {%- do run_query("refresh table " ~ refill_node_relation(node)) -%}
        {%- endif -%}
    {%- endfor -%}

    {%- do refill_spark_run_view_ddl(
        "create or replace view ops.data_as_of as " ~ refill_spark_data_as_of_sql()) -%}
    {{ return('') }}
{% endmacro %}

{% macro refill_spark_data_as_of_sql() %}
    {#-- ops.data_as_of on Spark: the complete-through day of each model, from the ledger. --#}
    with islands as (
        select
            model_name,
            partition_date,
            published_at,
            date_sub(partition_date, cast(row_number() over (
                partition by model_name order by partition_date
            ) as integer)) as island
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
    where island_rank = 1
{% endmacro %}
