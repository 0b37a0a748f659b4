{% macro refill_work_relation(relation) %}
    {#--
        The one rule of the work tables (staging), which hold whichever window built them
        last: a node reads one as it is only when this command rebuilds it (same window,
        same landing). Otherwise it reads the same rows computed from the landing for its
        own window, readiness gate included, so `dbt show`, `dbt retry`, `dbt test`,
        `dbt build --select fct_payments` and a slim-CI `state:modified+` that leaves
        staging out read their window, never another's. ref() applies it to every read
        (macros/schema/ref.sql); a work table without such a computation is refused.
    --#}
    {%- if not execute or relation is string -%}{{ return(relation) }}{%- endif -%}
    {%- set node = refill_node_of(relation) -%}
    {%- if node is none or node.config.materialized == 'partitioned' or refill_builds(node) -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set computed = {
        'stg_payments__manifests': refill_window_manifests,
        'stg_payments__raw_lines': refill_window_raw_lines,
        'stg_payments__lines': refill_window_landed_lines,
    } -%}
    {%- if node.name not in computed -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ model.name ~ " reads " ~ node.name ~ ", a work table this command does "
            ~ "not rebuild for its window; select it too (--select +" ~ model.name ~ "), nothing written") }}
    {%- endif -%}
    {{ return('(' ~ computed[node.name]() ~ ')') }}
{% endmacro %}
