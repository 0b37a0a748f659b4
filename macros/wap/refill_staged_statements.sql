{% macro refill_staged_statements(relation) %}
    {#-- The statements a chunk staged with refill_on_publish (none if it staged none). --#}
    {%- set staged = refill_shadow_relation(relation, '__on_publish') -%}
    {%- if not refill_table_exists(staged.schema, staged.identifier) -%}{{ return([]) }}{%- endif -%}
    {{ return(run_query('select statement from ' ~ staged).columns[0].values() | list) }}
{% endmacro %}
