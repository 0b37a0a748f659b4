{% macro refill_window_landed_lines() %}
    {#-- stg_payments__lines for the window, computed from the landing (readiness, the
         window's part files, the line reader and the classification rule): the
         composition of the staging models, for a command that does not build them.
         Without a window (a read-only command), every landed day: a published day whose
         landing is gone then fails the test rather than pass unchecked. --#}
    {%- set seeds = 'seed.' ~ project_name ~ '.' -%}
    {%- set markets = refill_loaded_seed(refill_node_relation(graph.nodes[seeds ~ 'markets'])) -%}
    {%- set fx_rates = refill_loaded_seed(refill_node_relation(graph.nodes[seeds ~ 'fx_rates_daily'])) -%}
    with raw_lines as (
        {{ refill_window_raw_lines('payments') }}
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
