{% macro refill_spark_latest_verdicts_sql(datasets, window) %}
    {#-- Spark: the latest recorded verdict rows (one per day and part file) of `datasets`
         for the window's days, from ops.readiness_verdicts (refill/warehouse/spark_readiness.py). --#}
    select *
    from (
        select
            verdicts.*,
            max(recorded_at) over (partition by dataset, day) as newest_recording
        from ops.readiness_verdicts as verdicts
        where
            dataset in ({%- for dataset in datasets %}{{ refill_string_literal(dataset) }}{{ ", " if not loop.last }}{%- endfor %})
            and {{ refill_window_predicate('day') }}
    ) as recorded
    where recorded_at = newest_recording
{% endmacro %}

{% macro refill_spark_unrecorded_reason(dataset, window) %}
    {{ return("no readiness verdict recorded for it; run `python -m refill.warehouse.spark_readiness "
        ~ dataset ~ " " ~ window.start_date ~ " " ~ window.end_date ~ "` (refill records it before each chunk)") }}
{% endmacro %}

{% macro spark__refill_window_readiness(dataset, window) %}
    {#-- Spark: the verdicts refill recorded for the window (the rule itself runs in Python:
         refill/rules/readiness.py); a day without one is not ready, and the reason names
         the command that records it. --#}
    {%- do run_query("refresh table ops.readiness_verdicts") -%}
    {%- set recorded = run_query(
        "select cast(day as string) as day, is_ready, reason, part_file, manifest_files, manifest_records,"
        ~ " exported_at, source_fingerprint from (" ~ refill_spark_latest_verdicts_sql([dataset], window)
        ~ ") order by day, part_file") -%}
    {%- set by_day = {} -%}
    {%- for row in recorded.rows -%}
        {%- if row['day'] not in by_day -%}
            {%- do by_day.update({row['day']: {
                'day': row['day'], 'is_ready': row['is_ready'], 'reason': row['reason'], 'part_files': [],
                'manifest_files': row['manifest_files'], 'manifest_records': row['manifest_records'],
                'exported_at': row['exported_at'], 'source_fingerprint': row['source_fingerprint']}}) -%}
        {%- endif -%}
        {%- if row['part_file'] is not none -%}
            {%- do by_day[row['day']]['part_files'].append(row['part_file']) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set verdicts = [] -%}
    {%- for offset in range(window.days) -%}
        {%- set day = (window.start_date + modules.datetime.timedelta(days=offset)).isoformat() -%}
        {%- do verdicts.append(by_day.get(day) or {
            'day': day, 'is_ready': false, 'reason': refill_spark_unrecorded_reason(dataset, window),
            'part_files': []}) -%}
    {%- endfor -%}
    {{ return(verdicts) }}
{% endmacro %}

{% macro spark__refill_landed_manifests(dataset, window) %}
    {#-- Spark: the window's verdicts as rows, read from ops.readiness_verdicts in this
         statement (a day without a recorded verdict is a not-ready row). --#}
    with recorded as (
        {{ refill_spark_latest_verdicts_sql([dataset], window) }}
    ),

    by_day as (
        select
            day,
            first(is_ready) as is_ready,
            first(reason) as reason,
            array_sort(collect_list(part_file)) as part_files,
            first(manifest_files) as manifest_files,
            first(manifest_records) as manifest_records,
            cast(first(exported_at) as timestamp) as exported_at,
            first(source_fingerprint) as source_fingerprint
        from recorded
        group by day
    )

    select
        days.day,
        coalesce(by_day.is_ready, false) as is_ready,
        coalesce(by_day.reason, {{ refill_string_literal(refill_spark_unrecorded_reason(dataset, window)) }}) as reason,
        coalesce(by_day.part_files, array()) as part_files,
        by_day.manifest_files,
        by_day.manifest_records,
        by_day.exported_at,
        by_day.source_fingerprint
    from generate_series(date '{{ window.start_date }}', date '{{ window.end_date }}', interval 1 day) as days (day)
    left join by_day on days.day = by_day.day
{% endmacro %}

{% macro spark__refill_landed_days(dataset) %}
    {#-- Spark: the days refill recorded a verdict for (the landing is listed in Python). --#}
    {%- do run_query("refresh table ops.readiness_verdicts") -%}
    {%- set result = run_query(
        "select distinct cast(day as string) from ops.readiness_verdicts where dataset = "
        ~ refill_string_literal(dataset) ~ " order by 1") -%}
    {{ return(result.columns[0].values() | list) }}
{% endmacro %}
