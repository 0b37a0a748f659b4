{% macro refill_table_exists(schema, identifier) %}
    {#-- Whether the warehouse has the table `schema`.`identifier` now (information_schema,
         not dbt's relation cache, which a hook at the end of a run does not refresh). --#}
    {%- set found = run_query(
        "select count(*) from information_schema.tables where table_schema = "
        ~ refill_string_literal(schema) ~ " and table_name = " ~ refill_string_literal(identifier)) -%}
    {{ return(found.columns[0].values()[0] > 0) }}
{% endmacro %}
