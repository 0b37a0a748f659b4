{% macro refill_loaded_seed(relation) %}
    {#-- A seed as a node reads it: refused with one line, before anything is written, when
         the warehouse has not loaded it and this command does not (a slim-CI
         `state:modified+` on an empty CI warehouse), instead of an engine error mid-run. --#}
    {#-- Rendering SQL (compile) reads no seed. DuckDB only: a Spark process registers the
         seeds' tables at on-run-start, after dbt filled its relation cache, so a missing
         seed there stays the engine's error. --#}
    {%- if not execute or relation is string or target.type != 'duckdb' or refill_command_renders_only() -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- for node in (graph.get('nodes') or {}).values() -%}
        {%- if node.resource_type == 'seed'
            and (node.schema | lower) == (relation.schema | lower)
            and ((node.alias or node.name) | lower) == (relation.identifier | lower)
            and not (flags.WHICH in ('build', 'seed', 'retry') and node.unique_id in selected_resources)
            and not refill_table_exists(relation.schema, relation.identifier) -%}
            {{ exceptions.raise_compiler_error(
                "refill input: " ~ model.name ~ " reads the seed " ~ node.name ~ ", which this warehouse has "
                ~ "not loaded; load it first (dbt seed) or select the parents too (--select +"
                ~ model.name ~ " or +state:modified+), nothing written") }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(relation) }}
{% endmacro %}
