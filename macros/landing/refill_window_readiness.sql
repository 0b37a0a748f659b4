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
