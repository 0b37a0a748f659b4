{% macro refill_landing_loaded_at(dataset, newest_days=7) %}
    {#--
        The source's loaded_at_query: the `exported_at` of the newest ready day among the
        `newest_days` newest dt= folders of `dataset` (null when none is ready, which dbt
        reads as never loaded). Ready is the readiness rule's verdict (refill/rules/
        readiness.py), not a column of the files: a manifest counts only when it agrees
        with its part files. The newest folders only, because the verdict reads each
        day's files; a day still exporting must not hide the complete one before it.
    --#}
    {{ return(adapter.dispatch('refill_landing_loaded_at', 'refill')(dataset, newest_days)) }}
{% endmacro %}


{% macro default__refill_landing_loaded_at(dataset, newest_days) %}
    {{ exceptions.raise_compiler_error(
        "refill: the landing's freshness is not implemented for adapter " ~ adapter.type()
        ~ "; add a " ~ adapter.type() ~ "__refill_landing_loaded_at macro") }}
{% endmacro %}


{% macro duckdb__refill_landing_loaded_at(dataset, newest_days) %}
    {#-- The plugin's functions, as the readiness gate asks them; the verdicts arrive as
         JSON the engine parses, never as values pasted into SQL. --#}
    with landed_days as (
        select unnest(from_json(refill_landed_days({{ refill_string_literal(dataset) }}), '["DATE"]')) as landed_date
    ),

    newest_landed_days as (
        select
            max(landed_date) - {{ newest_days | int - 1 }} as first_day,
            max(landed_date) as last_day
        from landed_days
    ),

    verdicts as (
        select
            unnest(
                from_json(
                    refill_window_readiness({{ refill_string_literal(dataset) }}, first_day, last_day),
                    '[{"day": "DATE", "is_ready": "BOOLEAN", "exported_at": "TIMESTAMP"}]'
                ),
                recursive := true
            )
        from newest_landed_days
    )

    select max_by(exported_at, day) as loaded_at
    from verdicts
    where is_ready
{% endmacro %}

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
