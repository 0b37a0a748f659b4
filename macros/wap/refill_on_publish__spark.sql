{% macro spark__refill_on_publish(statement) %}
    {%- set staged = refill_shadow_relation(this, '__on_publish') -%}
    {%- if execute -%}{%- do run_query("drop table if exists " ~ staged) -%}{%- endif -%}
    create table {{ staged }} using parquet location {{ refill_spark_location(staged) }} as
    select {{ refill_string_literal(statement) }} as statement
{% endmacro %}
