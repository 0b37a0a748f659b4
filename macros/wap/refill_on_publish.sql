{% macro refill_on_publish(statement) %}
    {{ return(adapter.dispatch('refill_on_publish', 'refill')(statement)) }}
{% endmacro %}

{% macro default__refill_on_publish(statement) %}
    {#-- Post-hook of a partitioned model: a statement to run inside the publish
         transaction, with the chunk (e.g. the view `refill cutover` reads). Rendered here,
         in the model's context (refs resolve), staged beside the shadow, and run by
         refill_publish only if the whole invocation publishes. --#}
    create or replace table {{ refill_shadow_relation(this, '__on_publish') }} as
    select {{ refill_string_literal(statement) }} as statement
{% endmacro %}

{% macro spark__refill_on_publish(statement) %}
    {%- set staged = refill_shadow_relation(this, '__on_publish') -%}
    {%- if execute -%}{%- do run_query("drop table if exists " ~ staged) -%}{%- endif -%}
    create table {{ staged }} using parquet location {{ refill_spark_location(staged) }} as
    select {{ refill_string_literal(statement) }} as statement
{% endmacro %}
