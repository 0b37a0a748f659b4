{% macro refill_node_of(relation) %}
    {#-- The model of the graph that writes `relation` (by schema and name), or none (also
         in a unit test, whose graph is empty). --#}
    {%- for node in (graph.get('nodes') or {}).values() -%}
        {%- if node.resource_type == 'model'
            and (node.schema | lower) == (relation.schema | lower)
            and ((node.alias or node.name) | lower) == (relation.identifier | lower) -%}
            {{ return(node) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(none) }}
{% endmacro %}
