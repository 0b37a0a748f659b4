{% macro refill_publish_preview(preview_id) %}
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
    {%- if chunk | length == 0 -%}
        {{ exceptions.raise_compiler_error("refill preview: " ~ preview_id ~ " keeps no rows; nothing published") }}
    {%- endif -%}
    {%- set marked -%}
        insert into ops.refill_preview_chunks values (
            {{ refill_string_literal(preview_id) }}, {{ refill_date_literal(window.start_date) }}, {{ refill_date_literal(window.end_date) }},
            {{ refill_string_literal(refill_run_id()) }}, {{ refill_run_started_at() }}
        )
    {%- endset -%}
    {%- do adapter.commit() -%}
    {%- do adapter.execute(refill_publish_nodes(chunk, [marked]), auto_begin=False, fetch=False) -%}
{% endmacro %}
