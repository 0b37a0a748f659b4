{% macro refill_window_part_files(manifests_relation) %}
    {{ return(adapter.dispatch('refill_window_part_files', 'refill')(manifests_relation)) }}
{% endmacro %}

{% macro default__refill_window_part_files(manifests_relation) %}
    {#-- The part files of the window (relative to the landing root), as listed by the
         manifests model that passed the readiness gate in this run. --#}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set listed = run_query("select unnest(part_files) from " ~ manifests_relation ~ " order by 1") -%}
    {{ return(listed.columns[0].values() | list) }}
{% endmacro %}

{% macro spark__refill_window_part_files(manifests_relation) %}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set listed = run_query("select explode(part_files) from " ~ manifests_relation ~ " order by 1") -%}
    {{ return(listed.columns[0].values() | list) }}
{% endmacro %}
