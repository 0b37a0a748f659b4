{% macro refill_staged_statements(relation) %}
    {#-- The statements a chunk staged with refill_on_publish (none if it staged none). --#}
    {%- set staged = refill_shadow_relation(relation, '__on_publish') -%}
    {%- set found = run_query(
        "select count(*) from information_schema.tables where table_schema = "
        ~ refill_string_literal(staged.schema) ~ " and table_name = " ~ refill_string_literal(staged.identifier)) -%}
    {%- if found.columns[0].values()[0] == 0 -%}{{ return([]) }}{%- endif -%}
    {{ return(run_query('select statement from ' ~ staged).columns[0].values() | list) }}
{% endmacro %}
