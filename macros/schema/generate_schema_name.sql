{% macro generate_schema_name(custom_schema_name, node) %}
    {#-- Custom schemas are used as named (staging, reference), not prefixed with the
         target schema: readers query `main.fct_payments` and `staging.stg_...`. --#}
    {{ return((custom_schema_name or target.schema) | trim) }}
{% endmacro %}
