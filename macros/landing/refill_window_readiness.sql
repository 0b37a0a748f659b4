{% macro refill_window_readiness(dataset, window) %}
    {#-- The readiness verdict of every day of the window (one dict per day), from the rule
         in refill/rules/readiness.py: raw verdicts, ready or not; refill_require_landing_ready
         is the gate that stops on them. --#}
    {{ return(adapter.dispatch('refill_window_readiness', 'refill')(dataset, window)) }}
{% endmacro %}


{% macro default__refill_window_readiness(dataset, window) %}
    {{ exceptions.raise_compiler_error(
        "refill: the readiness check is not implemented for adapter " ~ adapter.type()
        ~ "; add a " ~ adapter.type() ~ "__refill_window_readiness macro") }}
{% endmacro %}


{% macro duckdb__refill_window_readiness(dataset, window) %}
    {%- set result = run_query(
        "select refill_window_readiness(" ~ refill_string_literal(dataset)
        ~ ", date " ~ refill_string_literal(window.start_date)
        ~ ", date " ~ refill_string_literal(window.end_date) ~ ")") -%}
    {{ return(fromjson(result.columns[0].values()[0])) }}
{% endmacro %}

{% macro spark__refill_window_readiness(dataset, window) %}
    {#--
        Spark: the readiness rule (refill/rules/readiness.py, its one home) run by the engine
        itself, so a plain `dbt build` needs no step before it and the dbt process need not
        see the landing (on a cluster it is the cluster's to read). The engine runs the rule
        as a script transformation (refill/warehouse/spark_readiness.py, in the Python of its
        tasks) and keeps the window's verdicts in a work table
        (refill_spark_readiness_relation: one row per day and part file, with the file's
        sha256, which the line reader checks the bytes it reads against). Returns them as
        refill_window_readiness does: one dict per day, oldest first.
    --#}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set verdicts = refill_spark_readiness_relation(dataset, window) -%}
    {%- set request = refill_spark_readiness_request('window', dataset, window) -%}
    {%- do run_query("create schema if not exists " ~ verdicts.schema) -%}
    {%- do run_query("drop table if exists " ~ verdicts) -%}
    {%- do run_query("create table " ~ verdicts ~ " using parquet location " ~ refill_spark_location(verdicts)
        ~ " as " ~ refill_spark_verdict_rows_sql(request)) -%}

    {%- set recorded = run_query(
        "select cast(day as string) as day, is_ready, reason, part_file, manifest_files, manifest_records,"
        ~ " exported_at, source_fingerprint from " ~ verdicts ~ " order by day, part_file") -%}
    {%- set by_day = {} -%}
    {%- set days = [] -%}
    {%- for row in recorded.rows -%}
        {%- if row['day'] not in by_day -%}
            {%- do days.append(row['day']) -%}
            {%- do by_day.update({row['day']: {
                'day': row['day'], 'is_ready': row['is_ready'], 'reason': row['reason'], 'part_files': [],
                'manifest_files': row['manifest_files'], 'manifest_records': row['manifest_records'],
                'exported_at': row['exported_at'], 'source_fingerprint': row['source_fingerprint']}}) -%}
        {%- endif -%}
        {%- if row['part_file'] is not none -%}
            {%- do by_day[row['day']]['part_files'].append(row['part_file']) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set verdict_list = [] -%}
    {%- for day in days -%}{%- do verdict_list.append(by_day[day]) -%}{%- endfor -%}
    {{ return(verdict_list) }}
{% endmacro %}

{% macro refill_spark_readiness_relation(dataset, window) %}
    {#-- Spark: the work table of one dataset's verdicts over one window (schema wap: the
         chunk's own, never registered by another process). --#}
    {%- do refill_spark_landing_root(dataset) -%}
    {{ return(api.Relation.create(schema='wap', identifier=dataset ~ '__readiness__'
        ~ window.start_date.strftime('%Y%m%d') ~ '_' ~ window.end_date.strftime('%Y%m%d'), type='table')) }}
{% endmacro %}

{% macro refill_spark_landing_root(dataset) %}
    {#-- Spark: the landing root the engine reads (refill_landing_root: absolute on Spark),
         checked. It reaches SQL only as a string literal (and, in the line reader, inside a
         glob pattern: no glob character). --#}
    {%- if not modules.re.fullmatch('[a-z][a-z0-9_]{0,62}', dataset) -%}
        {{ exceptions.raise_compiler_error(
            "refill input: dataset name " ~ tojson(dataset) ~ " is not a plain lowercase name") }}
    {%- endif -%}
    {%- set root = refill_landing_root() | string -%}
    {%- if modules.re.search('[*?\\[\\]{},\\\\\\x00-\\x1f\\x7f]', root) -%}
        {{ exceptions.raise_compiler_error(
            "refill input: REFILL_LANDING " ~ tojson(root)
            ~ " holds a glob character, a backslash or a control character; use a plain folder path") }}
    {%- endif -%}
    {{ return(root.rstrip('/') or '/') }}
{% endmacro %}

{% macro spark__refill_landing_root() %}
    {#-- Spark: REFILL_LANDING (by default data/landing), absolute. The engine does not run
         in dbt's folder (the script transformation runs in one of Spark's, a cluster in its
         own process), so a relative value is resolved here as refill resolves it, against
         the project folder (refill_project_path): the readiness rule and the line reader
         read the same folder. (Its place is beside its twins in refill_landing_root.sql.) --#}
    {{ return(refill_project_path(env_var('REFILL_LANDING', 'data/landing'))) }}
{% endmacro %}

{% macro refill_spark_readiness_request(kind, dataset, window=none) %}
    {#-- Spark: the rows the script transformation reads (refill.warehouse.spark_readiness):
         values as string literals, never in the command. --#}
    {%- set start = window.start_date.isoformat() if window else '' -%}
    {%- set end = window.end_date.isoformat() if window else '' -%}
    {{ return("select " ~ refill_string_literal(kind) ~ " as kind, " ~ refill_string_literal(dataset) ~ " as dataset, "
        ~ refill_string_literal(start) ~ " as start_day, " ~ refill_string_literal(end) ~ " as end_day, "
        ~ refill_string_literal(refill_spark_landing_root(dataset)) ~ " as landing_root") }}
{% endmacro %}

{% macro refill_spark_readiness_transform_sql(request) %}
    {#-- Spark: the rule's answers to `request`, as rows (day string, payload string). The
         command is a constant; its Python is the engine tasks' ($PYSPARK_PYTHON). --#}
    select transform (kind, dataset, start_day, end_day, landing_root)
        row format delimited fields terminated by '\t' lines terminated by '\n'
        using {{ refill_string_literal('"${PYSPARK_PYTHON:-python3}" -m refill.warehouse.spark_readiness') }}
        as (day string, payload string)
        row format delimited fields terminated by '\t' lines terminated by '\n'
    from ({{ request }}) as request
{% endmacro %}

{% macro refill_spark_verdict_rows_sql(request) %}
    {#-- Spark: the verdicts of a `window` request, one row per day and part file (one
         without a file for a day with none). --#}
    with answers as (
        select
            to_date(day) as day,
            from_json(payload, 'is_ready boolean, reason string, part_files array<string>,'
                || ' part_sha256 array<string>, manifest_files bigint, manifest_records bigint,'
                || ' exported_at string, source_fingerprint string') as verdict
        from ({{ refill_spark_readiness_transform_sql(request) }}) as answered
    )

    select
        answers.day,
        answers.verdict.is_ready,
        answers.verdict.reason,
        parts.part_file,
        answers.verdict.part_sha256[parts.position] as part_sha256,
        answers.verdict.manifest_files,
        answers.verdict.manifest_records,
        answers.verdict.exported_at,
        answers.verdict.source_fingerprint
    from answers
    lateral view outer posexplode(answers.verdict.part_files) parts as position, part_file
{% endmacro %}
