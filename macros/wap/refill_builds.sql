{% macro refill_builds(node) %}
    {#-- True when this invocation builds the model `node` (a build or run that selected it).
         `dbt retry` runs the failed and skipped nodes of the last command without saying
         which (its selected_resources is empty): there a partitioned model counts as built
         (its shadow is read; refill_chunk_relation refuses one retry did not write) and a
         work table as not (its window's rows are computed from the landing,
         refill_work_relation), which is right whatever the retry reruns. --#}
    {%- if not refill_command_writes() -%}{{ return(false) }}{%- endif -%}
    {%- if selected_resources | length == 0 -%}
        {{ return(node.config.materialized == 'partitioned') }}
    {%- endif -%}
    {{ return(node.unique_id in selected_resources) }}
{% endmacro %}
