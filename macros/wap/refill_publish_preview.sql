{% macro refill_publish_preview(preview_id) %}
    {{ return(adapter.dispatch('refill_publish_preview', 'refill')(preview_id)) }}
{% endmacro %}

{% macro default__refill_publish_preview(preview_id) %}
    {#--
        `dbt run-operation refill_publish_preview` with a chunk's window (vars start_date,
        end_date, refill_run_id): publish the chunk a preview kept, without building any
        model. Each kept model's rows and ledger rows of the window become its shadows again
        (the ledger rows take the publishing run's id and time: the run that published
        them, and so does the rows' `_run_id`), its staged statements too, and
        refill_publish_nodes publishes them: the same transaction as a build's on-run-end,
        which also marks the chunk published from the preview (ops.refill_preview_chunks).
        Before it writes anything it asks refill_preview_refusal whether this chunk of the
        preview may be published now (the window one of its chunks, not published yet, not
        expired, the code, the landing and the published days as the preview saw them), and
        refuses otherwise: by refill, under its warehouse lock, or by hand.
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set preview_id = refill_preview_publishable(preview_id) -%}
    {%- set window = refill_window() -%}
    {%- set chunk = [] -%}
    {%- for node in graph.nodes.values() | sort(attribute='unique_id')
        if node.resource_type == 'model' and node.config.materialized == 'partitioned' -%}
        {%- set target = refill_node_relation(node) -%}
        {%- set kept = refill_preview_relation(preview_id, target) -%}
        {%- if load_relation(kept) is not none -%}
            {%- set kept_statements = refill_preview_relation(preview_id, target, '__on_publish') -%}
            {#-- the rows' lineage column (the models fill `_run_id` with refill_run_id())
                 names the run that publishes them, as the ledger rows do --#}
            {%- set columns = adapter.get_columns_in_relation(kept) | map(attribute='name') | map('lower') | list -%}
            {%- call statement('refill_unkeep_' ~ node.name) -%}
                create schema if not exists wap;
                create or replace table {{ refill_shadow_relation(target) }} as
                select *
                {%- if '_run_id' in columns %} replace ({{ refill_string_literal(refill_run_id()) }} as _run_id){% endif %}
                from {{ kept }} where {{ refill_window_predicate(node.config.partition_column) }};
                create or replace table {{ refill_shadow_relation(target, '__ledger') }} as
                select * replace (
                    {{ refill_string_literal(refill_run_id()) }} as run_id,
                    {{ refill_run_started_at() }} as published_at
                )
                from {{ refill_preview_relation(preview_id, target, '__ledger') }}
                where {{ refill_window_predicate('partition_date') }};
                create or replace table {{ refill_shadow_relation(target, '__on_publish') }} as
                select distinct statement from {{ kept_statements }}
                where window_start = {{ refill_date_literal(window.start_date) }} and window_end = {{ refill_date_literal(window.end_date) }};
            {%- endcall -%}
            {%- do chunk.append(node) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do refill_require_kept_models(preview_id, chunk) -%}
    {%- set marked -%}
        insert into ops.refill_preview_chunks values (
            {{ refill_string_literal(preview_id) }}, {{ refill_date_literal(window.start_date) }}, {{ refill_date_literal(window.end_date) }},
            {{ refill_string_literal(refill_run_id()) }}, {{ refill_run_started_at() }}
        )
    {%- endset -%}
    {%- do adapter.commit() -%}
    {%- do adapter.execute(refill_publish_nodes(chunk, [marked]), auto_begin=False, fetch=False) -%}
{% endmacro %}

{% macro spark__refill_publish_preview(preview_id) %}
    {#--
        Spark: the same operation. The same refusal first (spark__refill_preview_refusal:
        the rule run by the engine), then each kept model's rows of the window become its
        shadow again (the columns listed, `_run_id` naming the publishing run: Spark has no
        `select * replace`), its kept ledger rows the ledger shadow (run id and time the
        publishing run's), its kept statements the staged ones, and
        spark__refill_publish_nodes publishes them, ledger last, the chunk's mark in
        ops.refill_preview_chunks right after the ledger (a crash before the mark leaves the
        chunk to publish again: the same rows, so it converges).
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set preview_id = refill_preview_publishable(preview_id) -%}
    {%- set window = refill_window() -%}
    {%- set kept_tables = run_query(
        "show tables in preview like " ~ refill_string_literal(preview_id ~ '__*')).columns[1].values() -%}
    {%- set chunk = [] -%}
    {%- do run_query("create schema if not exists wap") -%}
    {%- for node in graph.nodes.values() | sort(attribute='unique_id')
        if node.resource_type == 'model' and node.config.materialized == 'partitioned' -%}
        {%- set target = refill_node_relation(node) -%}
        {%- set kept = refill_preview_relation(preview_id, target) -%}
        {%- if kept.identifier | lower in kept_tables -%}
            {%- set columns = [] -%}
            {%- for column in adapter.get_columns_in_relation(kept) -%}
                {%- do columns.append(refill_string_literal(refill_run_id()) ~ ' as _run_id'
                    if column.name | lower == '_run_id' else column.name) -%}
            {%- endfor -%}
            {%- set ledger_columns = [] -%}
            {%- for name in refill_spark_ledger_names() -%}
                {%- do ledger_columns.append(
                    refill_string_literal(refill_run_id()) ~ ' as run_id' if name == 'run_id'
                    else refill_run_started_at() ~ ' as published_at' if name == 'published_at'
                    else name) -%}
            {%- endfor -%}
            {%- set statements_kept = refill_preview_relation(preview_id, target, '__on_publish') -%}
            {%- for shadow, rows in [
                    (refill_shadow_relation(target), "select " ~ columns | join(', ') ~ " from " ~ kept
                        ~ " where " ~ refill_window_predicate(node.config.partition_column)),
                    (refill_shadow_relation(target, '__ledger'), "select " ~ ledger_columns | join(', ')
                        ~ " from " ~ refill_preview_relation(preview_id, target, '__ledger')
                        ~ " where " ~ refill_window_predicate('partition_date')),
                    (refill_shadow_relation(target, '__on_publish'), "select distinct statement from " ~ statements_kept
                        ~ " where window_start = " ~ refill_date_literal(window.start_date)
                        ~ " and window_end = " ~ refill_date_literal(window.end_date))] -%}
                {%- do run_query("drop table if exists " ~ shadow) -%}
                {%- do run_query("create table " ~ shadow ~ " using parquet location " ~ refill_spark_location(shadow)
                    ~ " as " ~ rows) -%}
            {%- endfor -%}
            {%- do chunk.append(node) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do refill_require_kept_models(preview_id, chunk) -%}
    {%- set marked = "insert into ops.refill_preview_chunks partition (preview_id = "
        ~ refill_string_literal(preview_id)
        ~ ") select " ~ refill_date_literal(window.start_date) ~ ", " ~ refill_date_literal(window.end_date)
        ~ ", " ~ refill_string_literal(refill_run_id()) ~ ", " ~ refill_run_started_at() -%}
    {%- do refill_publish_nodes(chunk, [marked]) -%}
{% endmacro %}

{% macro refill_preview_publishable(preview_id) %}
    {#-- The checked preview id whose chunk (the window's) refill_publish_preview may publish
         now; else the operation refused in one line (refill_preview_refusal's why), before
         anything is written. --#}
    {%- set preview_id = refill_preview_id(preview_id) -%}
    {%- if preview_id is none -%}
        {{ exceptions.raise_compiler_error("refill preview: give --args '{preview_id: <id>}'; nothing published") }}
    {%- endif -%}
    {%- set window = refill_window() -%}
    {%- set refusal = refill_preview_refusal(preview_id, window) -%}
    {%- if refusal -%}
        {{ exceptions.raise_compiler_error("refill preview: " ~ window.start_date ~ ".." ~ window.end_date
            ~ " of preview " ~ preview_id ~ " refused: " ~ refusal ~ "; nothing published") }}
    {%- endif -%}
    {{ return(preview_id) }}
{% endmacro %}

{% macro refill_require_kept_models(preview_id, chunk) %}
    {#-- Both engines' publish of a preview refuses a chunk for which it kept no model's rows
         (the preview ran no model, or its tables are gone): nothing to publish, said in one
         line before any shadow is published. --#}
    {%- if chunk | length == 0 -%}
        {{ exceptions.raise_compiler_error("refill preview: " ~ preview_id ~ " keeps no rows; nothing published") }}
    {%- endif -%}
{% endmacro %}
