{% macro refill_git_commit() %}
    {#-- The git commit of the project, from refill/code_version.py (its one home). --#}
    {{ return(adapter.dispatch('refill_git_commit', 'refill')()) }}
{% endmacro %}

{% macro default__refill_git_commit() %}
    {{ return(env_var('REFILL_GIT_COMMIT', 'unknown')) }}
{% endmacro %}

{% macro duckdb__refill_git_commit() %}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {{ return(run_query('select refill_git_commit()').columns[0].values()[0]) }}
{% endmacro %}
