{% macro refill_work_relation(relation) %}
    {#--
        What a data test reads for a work table (staging), which holds whichever window
        built it last: the table itself when this command rebuilt it (same window);
        otherwise, for the classified landed lines, the same rows computed from the
        landing for the test's window (refill_window_landed_lines); any other work table
        is refused with one line. So `dbt test --vars <window>` tests that window
        whatever was built before, never against another window's work table.
    --#}
    {%- if not execute -%}{{ return(relation) }}{%- endif -%}
    {%- set node = refill_node_of(relation) -%}
    {%- if node is none or node.config.materialized == 'partitioned' or refill_builds(node) -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- if node.name != 'stg_payments__lines' -%}
        {{ exceptions.raise_compiler_error(
            "refill window: a data test reads " ~ node.name ~ ", a work table this command did not "
            ~ "rebuild for its window; run it in a `dbt build` that selects it") }}
    {%- endif -%}
    {{ return('(' ~ refill_window_landed_lines() ~ ')') }}
{% endmacro %}
