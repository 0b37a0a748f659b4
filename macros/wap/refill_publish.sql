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
        refill_preview_id) the chunk is kept, not published (refill_keep_preview).
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
    {%- if chunk | length == 0 -%}{{ return('') }}{%- endif -%}
    {%- if failed -%}
        {{ return(refill_drop_shadows(chunk)) }}
    {%- endif -%}

    {%- if refill_preview_id() is not none -%}
        {#-- A preview (refill backfill --preview): the chunk is kept under the preview's
             id, not published; nothing consumers read changes. --#}
        {{ return(refill_keep_preview(chunk)) }}
    {%- endif -%}
    {{ return(refill_publish_nodes(chunk)) }}
{% endmacro %}

{% macro spark__refill_publish(results) %}
    {#--
        Spark (on-run-end): publish the invocation's chunks without a multi-table
        transaction (parquet has none). Every shadow was written and audited before this
        runs; if any node of the invocation failed, nothing is published. Then, in order:
          1. each model's window replaced from its shadow (spark__refill_publish_partitions_sql:
             a dynamic overwrite of the days the chunk has, and the window's other days
             cleared, so an empty day ends empty), models in the order dbt built them;
          2. the ledger rows of the whole chunk, LAST, in one statement (a dynamic overwrite
             of ops.partition_ledger's (model, day) partitions): the ledger never claims a
             day whose data was not replaced;
          3. the statements the chunk staged (views refill cutover reads), the consumer views;
          4. the shadows emptied and dropped.
        A crash anywhere leaves the ledger as it was for the chunk's days (or all of step 2
        done), and rerunning the chunk converges: each step replaces, never appends. Each
        crash window and why it is harmless: docs/guarantees.md, "Engines".
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
    {%- if chunk | length == 0 -%}{{ return('') }}{%- endif -%}
    {%- if failed -%}
        {%- do refill_spark_drop_shadows(chunk) -%}
        {{ return('') }}
    {%- endif -%}

    {%- if refill_preview_id() is not none -%}
        {#-- A preview keeps its chunk in one transaction (refill_keep_preview): not built on
             Spark. Refused before anything is replaced, so nothing is published. --#}
        {%- do refill_spark_drop_shadows(chunk) -%}
        {{ exceptions.raise_compiler_error(
            "refill preview: a restatement preview is not built for Spark yet; nothing published") }}
    {%- endif -%}
    {%- set publishing = chunk | map(attribute='alias') | list -%}
    {%- for node in chunk -%}
        {%- set target = refill_node_relation(node) -%}
        {%- set shadow = refill_shadow_relation(target) -%}
        {%- set partition_column = node.config.partition_column -%}
        {%- if refill_is_full_refresh(node) -%}
            {#-- Every landed day: the table's files become the shadow's rows (a static
                 overwrite of the whole folder), then it is registered again with its
                 dynamic option, which every later window's publish relies on. First, the
                 ledger forgets the days the shadow lacks (refill_spark_forget_unbuilt_days). --#}
            {%- do refill_spark_forget_unbuilt_days(node) -%}
            {%- do run_query("drop table if exists " ~ target) -%}
            {%- do run_query("create schema if not exists " ~ target.schema) -%}
            {%- do run_query("create table " ~ target
                ~ " using parquet options (partitionOverwriteMode 'static') partitioned by (" ~ partition_column ~ ")"
                ~ " location " ~ refill_spark_location(target) ~ " as select * from " ~ shadow) -%}
            {%- do run_query("drop table " ~ target) -%}
            {%- do refill_spark_register(target) -%}
        {%- else -%}
            {%- set columns = [] -%}
            {%- for column in adapter.get_columns_in_relation(shadow) -%}
                {%- do columns.append(column.name ~ ' ' ~ column.data_type) -%}
            {%- endfor -%}
            {%- do refill_spark_register(target, columns | join(', '), partition_column) -%}
            {%- do refill_publish_partitions_sql(target, shadow, partition_column) -%}
        {%- endif -%}
    {%- endfor -%}

    {%- set ledgers = [] -%}
    {%- for node in chunk -%}
        {%- do ledgers.append('select * from ' ~ refill_shadow_relation(refill_node_relation(node), '__ledger')) -%}
    {%- endfor -%}
    {%- do run_query(
        "insert overwrite table ops.partition_ledger partition (model_name, partition_date)"
        ~ " select status, run_id, git_commit, code_version, source_fingerprint, rows_written, source_records,"
        ~ " is_backfill, window_start, window_end, published_at, reference_fingerprint, model_name, partition_date"
        ~ " from (" ~ ledgers | join(' union all ') ~ ") as chunk_ledger") -%}

    {%- for node in chunk -%}
        {%- set staged = refill_shadow_relation(refill_node_relation(node), '__on_publish') -%}
        {%- set found = run_query(
            "show tables in " ~ staged.schema ~ " like " ~ refill_string_literal(staged.identifier)) -%}
        {%- if found.rows | length > 0 -%}
            {%- for statement in run_query('select statement from ' ~ staged).columns[0].values() -%}
                {%- do refill_spark_run_view_ddl(statement) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set versioned = [] -%}
    {%- for node in chunk if node.version is not none and node.name not in versioned -%}
        {%- do versioned.append(node.name) -%}
    {%- endfor -%}
    {%- for model_name in versioned -%}
        {%- set view_sql = refill_create_version_view(model_name, publishing) -%}
        {%- if view_sql | trim -%}{%- do refill_spark_run_view_ddl(view_sql) -%}{%- endif -%}
    {%- endfor -%}
    {%- do refill_spark_drop_shadows(chunk) -%}
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
