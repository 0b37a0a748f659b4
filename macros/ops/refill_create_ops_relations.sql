{% macro refill_create_ops_relations() %}
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
{% endmacro %}
