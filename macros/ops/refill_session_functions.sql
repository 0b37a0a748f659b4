{% macro refill_session_functions() %}
    {#-- The engine session's own functions that the project's SQL calls (DuckDB's spelling),
         created in the session that runs the statement: on-run-start and every model's
         pre-hook (dbt_project.yml). Renders nothing. --#}
    {{ return(adapter.dispatch('refill_session_functions', 'refill')()) }}
{% endmacro %}

{% macro default__refill_session_functions() %}
    {{ return('') }}
{% endmacro %}

{% macro spark__refill_session_functions() %}
    {#-- Spark: DuckDB's error(message) (the readiness gate of stg_payments__manifests) and
         generate_series (refill_audit_version_reconciles) as temporary functions. A session
         keeps them while it lives; on a cluster every dbt node opens a session of its own. --#}
    {%- if execute -%}
        {%- do run_query(
            "create or replace temporary function error(message string) returns boolean"
            ~ " return raise_error(message)") -%}
        {%- do run_query(
            "create or replace temporary function generate_series(first_day date, last_day date, step interval day)"
            ~ " returns table (day date) return select explode(sequence(first_day, last_day, step))") -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
