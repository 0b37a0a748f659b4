{% macro refill_keep_preview(chunk) %}
    {{ return(adapter.dispatch('refill_keep_preview', 'refill')(chunk)) }}
{% endmacro %}

{% macro default__refill_keep_preview(chunk) %}
    {#--
        on-run-end of a preview's chunk (refill_publish, var refill_preview_id): instead of
        publishing, put each shadow of the chunk (rows, staged ledger rows, staged
        statements with the chunk's window) in the preview's relations
        (refill_preview_relation), replacing what they held for the chunk's window, in one
        transaction, then drop the shadows. Nothing published, no ledger row and no
        consumer view changes. A preview already recorded (ops.refill_previews: its run
        ended) is complete: a build cannot add to what its publish would publish.
    --#}
    {%- set preview_id = refill_preview_id() -%}
    {%- set window = refill_window() -%}
    {%- do refill_refuse_recorded_preview(preview_id) -%}
    begin transaction;
    create schema if not exists preview;
    {%- for node in chunk %}
    {%- set target = refill_node_relation(node) %}
    {%- for suffix, day_column in [('', node.config.partition_column), ('__ledger', 'partition_date')] %}
    {%- set kept = refill_preview_relation(preview_id, target, suffix) %}
    {%- set shadow = refill_shadow_relation(target, suffix) %}
    create table if not exists {{ kept }} as select * from {{ shadow }} where false;
    delete from {{ kept }} where {{ refill_window_predicate(day_column) }};
    insert into {{ kept }} by name select * from {{ shadow }};
    {%- endfor %}
    {%- set statements_kept = refill_preview_relation(preview_id, target, '__on_publish') %}
    create table if not exists {{ statements_kept }} (
        window_start date, window_end date, statement varchar
    );
    delete from {{ statements_kept }}
    where window_start = {{ refill_date_literal(window.start_date) }} and window_end = {{ refill_date_literal(window.end_date) }};
    {%- for statement in refill_staged_statements(target) %}
    insert into {{ statements_kept }} values (
        {{ refill_date_literal(window.start_date) }}, {{ refill_date_literal(window.end_date) }}, {{ refill_string_literal(statement) }}
    );
    {%- endfor %}
    {%- endfor %}
    commit;
    {{ refill_drop_shadows(chunk) }}
{% endmacro %}

{% macro spark__refill_keep_preview(chunk) %}
    {#--
        Spark: the same keeping, without a transaction (parquet has none), ledger last, as
        spark__refill_publish publishes: each shadow's rows replace the chunk's days of the
        preview's table (refill_publish_partitions_sql: a dynamic overwrite, the window's
        days the shadow lacks cleared), then its staged statements replace the chunk's
        window's, then the kept ledger rows of every model, LAST: a chunk is kept once its
        kept ledger rows exist, and what the preview reports and publishes is read from
        them. A crash before leaves the chunk unkept (the preview is dropped by the run, or
        by the next command once its process is gone). Runs its statements; renders nothing.
    --#}
    {%- set preview_id = refill_preview_id() -%}
    {%- set window = refill_window() -%}
    {%- do refill_refuse_recorded_preview(preview_id) -%}
    {%- do run_query("create schema if not exists preview") -%}
    {%- for node in chunk -%}
        {%- set target = refill_node_relation(node) -%}
        {%- set shadow = refill_shadow_relation(target) -%}
        {%- set kept = refill_preview_relation(preview_id, target) -%}
        {%- set columns = [] -%}
        {%- for column in adapter.get_columns_in_relation(shadow) -%}
            {%- do columns.append(column.name ~ ' ' ~ column.data_type) -%}
        {%- endfor -%}
        {%- do refill_spark_register(kept, columns | join(', '), node.config.partition_column) -%}
        {%- do refill_publish_partitions_sql(kept, shadow, node.config.partition_column) -%}

        {%- set statements_kept = refill_preview_relation(preview_id, target, '__on_publish') -%}
        {%- do refill_spark_register(statements_kept,
            'statement string, window_start date, window_end date', 'window_start, window_end') -%}
        {%- set staged = refill_shadow_relation(target, '__on_publish') -%}
        {%- set found = run_query(
            "show tables in " ~ staged.schema ~ " like " ~ refill_string_literal(staged.identifier)) -%}
        {%- do run_query("insert overwrite table " ~ statements_kept ~ " partition (window_start = "
            ~ refill_date_literal(window.start_date) ~ ", window_end = " ~ refill_date_literal(window.end_date) ~ ") "
            ~ ("select statement from " ~ staged if found.rows | length > 0
               else "select cast(null as string) as statement from (select 1) as nothing where false")) -%}
    {%- endfor -%}
    {%- for node in chunk -%}
        {%- set target = refill_node_relation(node) -%}
        {%- set ledger_columns = refill_ops_columns_ddl(
            'partition_ledger', spark=true, last=['model_name', 'partition_date']) -%}
        {%- set kept_ledger = refill_preview_relation(preview_id, target, '__ledger') -%}
        {%- do refill_spark_register(kept_ledger, ledger_columns, 'model_name, partition_date') -%}
        {%- do run_query("insert overwrite table " ~ kept_ledger ~ " partition (model_name, partition_date) select "
            ~ refill_spark_ledger_names() | join(', ') ~ " from " ~ refill_shadow_relation(target, '__ledger')) -%}
    {%- endfor -%}
    {%- do refill_spark_drop_shadows(chunk) -%}
    {{ return('') }}
{% endmacro %}

{% macro refill_refuse_recorded_preview(preview_id) %}
    {#-- A preview already recorded (ops.refill_previews: its run ended) is complete: a build
         cannot add to what its publish would publish. --#}
    {%- if refill_table_exists('ops', 'refill_previews') -%}
        {%- set recorded = run_query("select count(*) from ops.refill_previews where preview_id = "
            ~ refill_string_literal(preview_id)).columns[0].values()[0] -%}
        {%- if recorded > 0 -%}
            {{ exceptions.raise_compiler_error("refill preview: preview " ~ preview_id
                ~ " is recorded, complete: a build cannot add to it; make a new preview, nothing kept") }}
        {%- endif -%}
    {%- endif -%}
{% endmacro %}
