{% macro spark__refill_landing_loaded_at(dataset, newest_days) %}
    {#-- Spark: DuckDB's query, the rule's answers run by the engine (spark__refill_landed_days'
         request, then the verdicts of the newest `newest_days` landed days, as the staging
         gate asks them): the `exported_at` of the newest ready day, null when none is. The
         window is computed by the engine from the listed days: nothing is pasted in but
         the dataset and the landing root, as literals. --#}
    {%- set landed = refill_spark_readiness_transform_sql(refill_spark_readiness_request('days', dataset)) -%}
    {%- set newest = "select 'window' as kind, " ~ refill_string_literal(dataset) ~ " as dataset,"
        ~ " cast(date_sub(max(to_date(day)), " ~ (newest_days | int - 1) ~ ") as string) as start_day,"
        ~ " cast(max(to_date(day)) as string) as end_day, "
        ~ refill_string_literal(refill_spark_landing_root(dataset)) ~ " as landing_root"
        ~ " from (" ~ landed ~ ") as landed having max(day) is not null" -%}
    select max_by(cast(exported_at as timestamp), day) as loaded_at
    from ({{ refill_spark_verdict_rows_sql(newest) }}) as verdicts
    where is_ready
{% endmacro %}
