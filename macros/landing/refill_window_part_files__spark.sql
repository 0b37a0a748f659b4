{% macro spark__refill_window_part_files(manifests_relation) %}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set listed = run_query("select explode(part_files) from " ~ manifests_relation ~ " order by 1") -%}
    {{ return(listed.columns[0].values() | list) }}
{% endmacro %}
