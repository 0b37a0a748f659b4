{% macro refill_spark_type(type) %}
    {#-- DuckDB's `varchar` (dbt_project.yml's seed column types) is Spark's `string`
         (Spark's varchar needs a length). --#}
    {{ return('string' if (type | lower | trim) == 'varchar' else type) }}
{% endmacro %}
