{% macro refill_shadow_relation(relation, suffix='') %}
    {{ return(adapter.dispatch('refill_shadow_relation', 'refill')(relation, suffix)) }}
{% endmacro %}

{% macro default__refill_shadow_relation(relation, suffix='') %}
    {#-- Where a partitioned model writes its chunk before publish: schema `wap`, named
         after the published relation (schema__identifier), so no consumer reads it and
         two schemas never share one. suffix='__ledger': the chunk's ledger rows. --#}
    {{ return(api.Relation.create(
        database=relation.database,
        schema='wap',
        identifier=relation.schema ~ '__' ~ relation.identifier ~ suffix,
        type='table')) }}
{% endmacro %}

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
