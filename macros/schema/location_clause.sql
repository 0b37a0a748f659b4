{% macro spark__location_clause() %}
    {#-- dbt-spark's tables (seeds, staging) at refill's folder for them (refill_spark_location)
         rather than managed: a managed table cannot be created over the folder a previous
         process left, and with spark.sql.legacy.allowNonEmptyLocationInCTAS (profiles.yml)
         a rebuild replaces its files. --#}
    location {{ refill_spark_work_location(this) if refill_spark_is_work_table() else refill_spark_location(this) }}
{%- endmacro %}
