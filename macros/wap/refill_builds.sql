{% macro refill_builds(node) %}
    {#-- True when this invocation builds the model `node` (a build or run that selected it). --#}
    {{ return(refill_command_writes() and node.unique_id in selected_resources) }}
{% endmacro %}
