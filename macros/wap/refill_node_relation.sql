{% macro refill_node_relation(node) %}
    {#-- The relation a model of the graph publishes (a versioned model writes <name>_v<n>). --#}
    {{ return(api.Relation.create(
        database=node.database, schema=node.schema, identifier=node.alias or node.name, type='table')) }}
{% endmacro %}
