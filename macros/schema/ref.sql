{% macro ref() %}
    {#-- dbt's ref (builtins.ref), with two departures: a work table this command does not
         rebuild is its window's rows computed from the landing (refill_work_relation), a
         seed the warehouse lacks is refused (refill_loaded_seed); and what
         refill_window_relation says a relation of this window is (on Spark, a work table
         is the window's own). --#}
    {%- set relation = refill_loaded_seed(refill_work_relation(builtins.ref(*varargs, **kwargs))) -%}
    {%- if relation is string -%}{{ return(relation) }}{%- endif -%}
    {{ return(refill_window_relation(relation)) }}
{% endmacro %}

{% macro refill_window_relation(relation) %}
    {#-- The relation a node reads or writes for the window being built. --#}
    {{ return(adapter.dispatch('refill_window_relation', 'refill')(relation)) }}
{% endmacro %}

{% macro default__refill_window_relation(relation) %}
    {#-- One writer at a time (DuckDB): every relation is its own. --#}
    {{ return(relation) }}
{% endmacro %}

{% macro spark__refill_window_relation(relation) %}
    {#-- Spark: a work table or view (a model materialized `table` or `view`: staging) of a
         build with a window is that window's own relation, `<name>__<first day>_<last day>`. Chunks
         build at once, and a cluster's metastore is one catalog for all of them: under one
         name, one chunk's table would replace another's while that one still reads it.
         (A build without a window covers every landed day and keeps the plain name.) --#}
    {%- if not execute or var('start_date', none) is none or relation is string -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set node = refill_node_of(relation) -%}
    {%- if node is none or node.config.materialized not in ('table', 'view') -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set window = refill_window() -%}
    {{ return(api.Relation.create(database=relation.database, schema=relation.schema,
        identifier=relation.identifier ~ '__' ~ window.start_date.strftime('%Y%m%d') ~ '_'
            ~ window.end_date.strftime('%Y%m%d'),
        type=relation.type or 'table')) }}
{% endmacro %}
