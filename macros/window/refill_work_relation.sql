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


{% macro refill_window_landed_lines() %}
    {#-- stg_payments__lines for the window, computed from the landing (readiness, the
         window's part files, the line reader and the classification rule): the
         composition of the staging models, for a command that does not build them.
         Without a window (a read-only command), every landed day: a published day whose
         landing is gone then fails the test rather than pass unchecked. --#}
    {%- set verdicts = refill_require_landing_ready('payments', refill_window()) -%}
    {%- set part_files = [] -%}
    {%- for verdict in verdicts -%}{%- do part_files.extend(verdict.part_files) -%}{%- endfor -%}
    {%- set markets = refill_node_relation(graph.nodes['seed.' ~ project_name ~ '.markets']) -%}
    {%- set fx_rates = refill_node_relation(graph.nodes['seed.' ~ project_name ~ '.fx_rates_daily']) -%}
    with raw_lines as (
        {{ refill_read_landed_lines(part_files | sort) }}
    ),

    markets as (
        select * from {{ markets }}
    ),

    currencies as (
        select distinct currency from {{ fx_rates }}
    ),

    classified as (
        {{ refill_classify_payment_lines('raw_lines', 'markets', 'currencies') }}
    )

    select * from classified
{% endmacro %}
