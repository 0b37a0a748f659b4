{% test matches_its_version_rules(model, partition_column, version) %}
    {#-- Fails with one row per partition and measure where a version of fct_daily_revenue
         differs from what its rules give from fct_payments (fct_daily_revenue_expected_sql)
         over the window: the same check as the version's audit. Both sides are read as
         this command sees them: the chunk when it builds them, else what is published. --#}
    {%- set expected = '(' ~ fct_daily_revenue_expected_sql(version, refill_chunk_relation(ref('fct_payments'))) ~ ')' -%}
    {%- set measures = {} -%}
    {%- for name in ['transactions', 'refunds', 'gross_revenue_usd', 'refunds_usd', 'revenue_usd'] -%}
        {%- do measures.update({name: 'sum(' ~ name ~ ')'}) -%}
    {%- endfor -%}
    {{ refill_reconciliation_sql(model, partition_column, expected, 'partition_date', measures, for_test=true) }}
{% endtest %}
