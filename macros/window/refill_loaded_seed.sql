{% macro refill_loaded_seed(relation) %}
    {#-- A seed as a node reads it: refused with one line, before anything is written, when
         the warehouse has not loaded it and this command does not (a slim-CI
         `state:modified+` on an empty CI warehouse), instead of an engine error mid-run. --#}
    {%- if not execute or relation is string -%}{{ return(relation) }}{%- endif -%}
    {%- for node in (graph.get('nodes') or {}).values() -%}
        {%- if node.resource_type == 'seed'
            and (node.schema | lower) == (relation.schema | lower)
            and ((node.alias or node.name) | lower) == (relation.identifier | lower)
            and not (flags.WHICH in ('build', 'seed', 'retry') and node.unique_id in selected_resources)
            and adapter.get_relation(relation.database, relation.schema, relation.identifier) is none -%}
            {{ exceptions.raise_compiler_error(
                "refill input: " ~ model.name ~ " reads the seed " ~ node.name ~ ", which this warehouse has "
                ~ "not loaded; load it first (dbt seed) or select the parents too (--select +"
                ~ model.name ~ " or +state:modified+), nothing written") }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(relation) }}
{% endmacro %}
