{% macro spark__refill_shadow_relation(relation, suffix='') %}
    {#-- Spark: one shadow per model AND per chunk (its window's first and last day), so
         chunks written at once by separate processes never share one. --#}
    {%- set window = refill_window() -%}
    {{ return(api.Relation.create(
        database=relation.database,
        schema='wap',
        identifier=relation.schema ~ '__' ~ relation.identifier
            ~ '__' ~ window.start_date.strftime('%Y%m%d') ~ '_' ~ window.end_date.strftime('%Y%m%d') ~ suffix,
        type='table')) }}
{% endmacro %}
