{% macro refill_keep_preview(chunk) %}
    {#--
        on-run-end of a preview's chunk (refill_publish, var refill_preview_id): instead of
        publishing, append each shadow of the chunk (rows, staged ledger rows, staged
        statements with the chunk's window) to the preview's relations
        (refill_preview_relation), in one transaction, then drop the shadows. Nothing
        published, no ledger row and no consumer view changes.
    --#}
    {%- set preview_id = refill_preview_id() -%}
    {%- set window = refill_window() -%}
    begin transaction;
    create schema if not exists preview;
    {%- for node in chunk %}
    {%- set target = refill_node_relation(node) %}
    {%- for suffix in ['', '__ledger'] %}
    {%- set kept = refill_preview_relation(preview_id, target, suffix) %}
    {%- set shadow = refill_shadow_relation(target, suffix) %}
    create table if not exists {{ kept }} as select * from {{ shadow }} where false;
    insert into {{ kept }} by name select * from {{ shadow }};
    {%- endfor %}
    {%- set statements_kept = refill_preview_relation(preview_id, target, '__on_publish') %}
    create table if not exists {{ statements_kept }} (
        window_start date, window_end date, statement varchar
    );
    {%- for statement in refill_staged_statements(target) %}
    insert into {{ statements_kept }} values (
        date '{{ window.start_date }}', date '{{ window.end_date }}', {{ refill_string_literal(statement) }}
    );
    {%- endfor %}
    {%- endfor %}
    commit;
    {{ refill_drop_shadows(chunk) }}
{% endmacro %}
