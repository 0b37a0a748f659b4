{% macro refill_landed_days(dataset) %}
    {#-- Every day with a dt= folder for `dataset`, ready or not, as ISO strings, oldest first. --#}
    {{ return(adapter.dispatch('refill_landed_days', 'refill')(dataset)) }}
{% endmacro %}

{% macro default__refill_landed_days(dataset) %}
    {{ exceptions.raise_compiler_error(
        "refill: listing landed days is not implemented for adapter " ~ adapter.type()
        ~ "; add a " ~ adapter.type() ~ "__refill_landed_days macro") }}
{% endmacro %}

{% macro duckdb__refill_landed_days(dataset) %}
    {%- set result = run_query("select refill_landed_days(" ~ refill_string_literal(dataset) ~ ")") -%}
    {{ return(fromjson(result.columns[0].values()[0])) }}
{% endmacro %}

{% macro spark__refill_landed_days(dataset) %}
    {#-- Spark: every day with a dt= folder, ready or not, oldest first (readiness.landed_days,
         run by the engine as the verdicts are). --#}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set result = run_query(
        "select day from (" ~ refill_spark_readiness_transform_sql(refill_spark_readiness_request('days', dataset))
        ~ ") order by day") -%}
    {{ return(result.columns[0].values() | list) }}
{% endmacro %}
