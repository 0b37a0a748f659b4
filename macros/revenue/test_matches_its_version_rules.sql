{% test matches_its_version_rules(model, partition_column, version) %}
    {#-- Fails with one row per partition and measure where a version of fct_daily_revenue
         differs from what its rules give from fct_payments (fct_daily_revenue_expected_sql)
         over the window: the same check as the version's audit. Both sides are read as
         this command sees them: the chunk when it builds them, else what is published. --#}
    {#-- fct_payments from the graph, not ref: a ref would make this test a child of
         fct_payments, run (and fail) by `dbt build --select +fct_payments` whenever new
         facts leave the published versions behind, which refill allows and
         `refill cutover` reports. --#}
    {%- if not execute -%}
        {#-- Parsing (the graph is empty): declare the seed the rules read. --#}
        {%- do ref('fx_rates_daily') -%}
        {{ return('select 1 where false') }}
    {%- endif -%}
    {%- set payments = refill_node_relation(graph.nodes['model.' ~ project_name ~ '.fct_payments']) -%}
    {%- set expected = '(' ~ fct_daily_revenue_expected_sql(version, refill_chunk_relation(payments)) ~ ')' -%}
    {%- set measures = {} -%}
    {%- for name in ['transactions', 'refunds', 'gross_revenue_usd', 'refunds_usd', 'revenue_usd'] -%}
        {%- do measures.update({name: 'sum(' ~ name ~ ')'}) -%}
    {%- endfor -%}
    {{ refill_reconciliation_sql(model, partition_column, expected, 'partition_date', measures, for_test=true) }}
{% endtest %}
