{% macro refill_table_exists(schema, identifier) %}
    {{ return(adapter.dispatch('refill_table_exists', 'refill')(schema, identifier)) }}
{% endmacro %}

{% macro default__refill_table_exists(schema, identifier) %}
    {#-- Whether the warehouse has the table `schema`.`identifier` now (information_schema,
         not dbt's relation cache, which a hook at the end of a run does not refresh). --#}
    {%- set found = run_query(
        "select count(*) from information_schema.tables where table_schema = "
        ~ refill_string_literal(schema) ~ " and table_name = " ~ refill_string_literal(identifier)) -%}
    {{ return(found.columns[0].values()[0] > 0) }}
{% endmacro %}

{% macro spark__refill_table_exists(schema, identifier) %}
    {#-- Spark has no information_schema: the catalog asked (`show`), the schema first (a
         listing of a schema that does not exist fails). Names are refill's own constants
         and relations, never input. --#}
    {%- if run_query("show databases like " ~ refill_string_literal(schema)).rows | length == 0 -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(run_query("show tables in " ~ schema ~ " like " ~ refill_string_literal(identifier)).rows | length > 0) }}
{% endmacro %}
