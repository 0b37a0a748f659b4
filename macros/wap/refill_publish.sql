{% macro refill_publish(results) %}
    {{ return(adapter.dispatch('refill_publish', 'refill')(results)) }}
{% endmacro %}

{% macro default__refill_publish(results) %}
    {#--
        on-run-end: publish the invocation's chunks, all in one DuckDB transaction, or
        none. Every partitioned model this invocation built (its shadow written and
        audited, its ledger rows staged) is moved into place: its window's partitions
        replaced by the shadow's rows (refill_publish_partitions_sql), its ledger rows
        replaced, and the consumer views of versioned models re-created. If any node of
        the invocation failed, errored or was skipped (a later model's audit, a data
        test), nothing is published. A kill before the commit leaves every relation as
        it was: DuckDB does not replay an uncommitted transaction. The shadows are
        dropped afterwards (they are work tables; a killed run leaves them for the next
        build of the model, which replaces them). The transaction is
        refill_publish_nodes (a preview's publish renders it too); under a preview (var
        refill_preview_id) the chunk is kept, not published (refill_keep_preview). A plain
        dbt invocation's row of ops.run_log (refill_plain_run_log) commits in the same
        transaction, or is written alone when nothing is published.
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set chunk = [] -%}
    {%- set failed = [] -%}
    {%- for result in results if result.node is defined and result.node is not none -%}
        {%- if result.status in ('error', 'fail', 'skipped', 'runtime error', 'partial success') -%}
            {%- do failed.append(result.node.name) -%}
        {%- elif result.node.resource_type == 'model' and result.node.config.materialized == 'partitioned' -%}
            {%- do chunk.append(result.node) -%}
        {%- endif -%}
    {%- endfor -%}
    {#-- A plain dbt invocation's run-log row, in the publish transaction (none for a flow's). --#}
    {%- set logged = refill_plain_run_log(results) -%}
    {%- set logged_sql = logged | join(';\n') ~ (';\n' if logged else '') -%}
    {%- if chunk | length == 0 -%}{{ return(logged_sql) }}{%- endif -%}
    {%- if failed -%}
        {{ return(logged_sql ~ refill_drop_shadows(chunk)) }}
    {%- endif -%}

    {%- if refill_preview_id() is not none -%}
        {#-- A preview (refill backfill --preview): the chunk is kept under the preview's
             id, not published; nothing consumers read changes. --#}
        {{ return(logged_sql ~ refill_keep_preview(chunk)) }}
    {%- endif -%}
    {{ return(refill_publish_nodes(chunk, also=logged)) }}
{% endmacro %}

{% macro spark__refill_publish(results) %}
    {#--
        Spark (on-run-end): publish the invocation's chunk without a multi-table
        transaction (parquet has none): spark__refill_publish_nodes, ledger last (its steps
        and crash windows there, and in docs/guarantees.md, "Engines"). Every shadow was
        written and audited before this runs; if any node of the invocation failed, nothing
        is published. Under a preview the chunk is kept instead (spark__refill_keep_preview).
        Then the window's work tables are emptied and its landing tables dropped.
        Runs its statements itself (Spark takes one per call); renders nothing.
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set chunk = [] -%}
    {%- set failed = [] -%}
    {%- for result in results if result.node is defined and result.node is not none -%}
        {%- if result.status in ('error', 'fail', 'skipped', 'runtime error', 'partial success') -%}
            {%- do failed.append(result.node.name) -%}
        {%- elif result.node.resource_type == 'model' and result.node.config.materialized == 'partitioned' -%}
            {%- do chunk.append(result.node) -%}
        {%- endif -%}
    {%- endfor -%}
    {#-- A plain dbt invocation's run-log row: appended once the outcome is known (after the
         ledger when it publishes); none for a flow's. --#}
    {%- set logged = refill_plain_run_log(results) -%}
    {%- if chunk | length == 0 or failed -%}
        {%- for statement in logged -%}{%- do run_query(statement) -%}{%- endfor -%}
    {%- endif -%}
    {%- if chunk | length == 0 -%}{{ return('') }}{%- endif -%}
    {%- if failed -%}
        {%- do refill_spark_drop_shadows(chunk) -%}
        {{ return('') }}
    {%- endif -%}

    {%- if refill_preview_id() is not none -%}
        {#-- A preview (refill backfill --preview): the chunk is kept under the preview's
             id, not published (refill_keep_preview); nothing consumers read changes. --#}
        {%- do refill_keep_preview(chunk) -%}
        {%- for statement in logged -%}{%- do run_query(statement) -%}{%- endfor -%}
    {%- else -%}
        {%- do refill_publish_nodes(chunk, also=logged) -%}
    {%- endif -%}
    {%- do refill_spark_empty_work_tables(results) -%}
    {%- do refill_spark_drop_landing_tables() -%}
    {{ return('') }}
{% endmacro %}

{% macro refill_spark_drop_landing_tables() %}
    {#-- Spark: once the chunk is published, the tables its build read the landing through
         (the window's readiness verdicts, its part files as binaryFile) dropped: their rows
         are the verdict rule's and the landing's own (a binaryFile table's files are the
         landing: dropping it keeps them). In a cluster's metastore they would otherwise
         pile up, one pair per chunk ever built, and every build's listing would grow. --#}
    {%- set window = refill_window() -%}
    {%- set suffix = window.start_date.strftime('%Y%m%d') ~ '_' ~ window.end_date.strftime('%Y%m%d') -%}
    {%- for row in run_query("show tables in wap like " ~ refill_string_literal(
            '*__readiness__' ~ suffix ~ '|landed_files__' ~ suffix)).rows -%}
        {%- do run_query("drop table if exists wap.`" ~ row[1] ~ "`") -%}
    {%- endfor -%}
{% endmacro %}

{% macro refill_spark_empty_work_tables(results) %}
    {#-- Spark: once the chunk is published, the window's work tables (staging: every landed
         line of the window, classified) emptied, as the shadows are. Their folder is private
         to the window (refill_spark_work_location), so without this every chunk ever built
         would keep a copy of its lines. A failed chunk keeps them for whoever investigates;
         its rerun replaces them. --#}
    {%- for result in results if result.node is defined and result.node is not none
            and result.node.resource_type == 'model' and result.node.config.materialized == 'view' -%}
        {%- do run_query("drop view if exists " ~ refill_window_relation(refill_node_relation(result.node))) -%}
    {%- endfor -%}
    {%- for result in results if result.node is defined and result.node is not none
            and result.node.resource_type == 'model' and result.node.config.materialized == 'table' -%}
        {%- set relation = refill_node_relation(result.node) -%}
        {%- do refill_spark_empty_table(refill_window_relation(relation), refill_spark_work_location(relation)) -%}
    {%- endfor -%}
{% endmacro %}

{% macro refill_spark_drop_shadows(nodes) %}
    {#-- Spark: the chunk's work tables emptied (a zero-row table written over their folder:
         they are external, so a drop alone would keep the files) and dropped. --#}
    {%- for node in nodes -%}
        {%- for suffix in ['', '__ledger', '__on_publish'] -%}
            {%- set shadow = refill_shadow_relation(refill_node_relation(node), suffix) -%}
            {%- do refill_spark_empty_table(shadow, refill_spark_location(shadow)) -%}
        {%- endfor -%}
    {%- endfor -%}
{% endmacro %}

{% macro refill_spark_forget_unbuilt_days(node) %}
    {#-- Spark, a full refresh of `node`: its ledger rows of days this chunk does not build
         (published before, their landing gone since: refill_refuse_history_loss let them
         go) removed, as DuckDB's publish deletes them. Before the table is replaced, not in
         the ledger's last step: a crash in between leaves the ledger claiming fewer days
         than the table holds, never more. No delete on parquet: each day's ledger partition
         is overwritten (static) with no rows (read from the chunk's ledger: Spark refuses an
         overwrite that reads its own table). --#}
    {%- set model = refill_string_literal(refill_node_relation(node).identifier) -%}
    {%- set chunk_ledger = refill_shadow_relation(refill_node_relation(node), '__ledger') -%}
    {%- set gone = run_query(
        "select distinct cast(partition_date as string) from ops.partition_ledger where model_name = " ~ model
        ~ " and partition_date not in (select partition_date from " ~ chunk_ledger ~ ") order by 1"
        ).columns[0].values() -%}
    {%- set kept = [] -%}
    {%- for name, _, _ in refill_ops_columns('partition_ledger')
            if name not in ('model_name', 'partition_date') -%}
        {%- do kept.append(name) -%}
    {%- endfor -%}
    {%- for day in gone -%}
        {%- do run_query("insert overwrite table ops.partition_ledger partition (model_name = " ~ model
            ~ ", partition_date = date " ~ refill_string_literal(day) ~ ") select " ~ kept | join(', ')
            ~ " from " ~ chunk_ledger ~ " where false") -%}
    {%- endfor -%}
{% endmacro %}

{% macro refill_spark_empty_table(relation, location) %}
    {#-- Spark: an external work table emptied and dropped: a zero-row table written over its
         folder (`location`, a string literal), as a drop alone keeps an external table's files. --#}
    {%- do run_query("drop table if exists " ~ relation) -%}
    {%- do run_query("create table " ~ relation ~ " using parquet location " ~ location
        ~ " as select 1 as emptied where false") -%}
    {%- do run_query("drop table if exists " ~ relation) -%}
{% endmacro %}
