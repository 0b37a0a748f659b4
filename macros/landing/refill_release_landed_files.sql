{% macro refill_release_landed_files() %}
    {#-- on-run-end, before the publish: the landed files the line reader held open for the
         engine (refill_read_landed_lines) are closed, and a file written to while it was
         held fails this hook, so dbt skips the publish after it and nothing is published.
         Renders nothing. --#}
    {{ return(adapter.dispatch('refill_release_landed_files', 'refill')()) }}
{% endmacro %}

{% macro default__refill_release_landed_files() %}
    {#-- An engine that checks the bytes it reads in the statement itself (Spark: each
         file's sha256 against its verdict's) holds nothing. --#}
    {{ return('') }}
{% endmacro %}

{% macro duckdb__refill_release_landed_files() %}
    {%- if execute -%}
        {%- do run_query("select refill_release_part_files()") -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
