{% macro refill_keep_preview(chunk) %}
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
    {%- if refill_table_exists('ops', 'refill_previews') -%}
        {%- set recorded = run_query("select count(*) from ops.refill_previews where preview_id = "
            ~ refill_string_literal(preview_id)).columns[0].values()[0] -%}
        {%- if recorded > 0 -%}
            {{ exceptions.raise_compiler_error("refill preview: preview " ~ preview_id
                ~ " is recorded, complete: a build cannot add to it; make a new preview, nothing kept") }}
        {%- endif -%}
    {%- endif -%}
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
