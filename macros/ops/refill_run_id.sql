{% macro refill_run_id() %}
    {#-- The run a partition belongs to: the flow's run id when a flow started dbt, else dbt's own. --#}
    {{ return(var('refill_run_id', none) or invocation_id) }}
{% endmacro %}
