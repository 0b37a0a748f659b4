{% macro refill_is_full_refresh(node) %}
    {#-- dbt's rule (should_full_refresh) for a node other than the one being run: its own
         full_refresh config when set, else the --full-refresh flag. --#}
    {%- set configured = node.config.full_refresh -%}
    {{ return(configured if configured is not none else flags.FULL_REFRESH) }}
{% endmacro %}
