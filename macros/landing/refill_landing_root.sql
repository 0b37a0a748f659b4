{% macro refill_landing_root() %}
    {{ return(adapter.dispatch('refill_landing_root', 'refill')()) }}
{% endmacro %}

{% macro default__refill_landing_root() %}
    {{ return(env_var('REFILL_LANDING', 'data/landing')) }}
{% endmacro %}

{% macro duckdb__refill_landing_root() %}
    {#-- Asks refill.settings (through the plugin) so dbt and the flows resolve the same folder. --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {{ return(run_query('select refill_landing_root()').columns[0].values()[0]) }}
{% endmacro %}
