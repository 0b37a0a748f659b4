{% macro refill_chunk_relation(relation) %}
    {#--
        The relation to read for a model in this invocation: its shadow when this
        command builds it (the chunk being written, not yet published), else the
        relation itself (what is published). Downstream models, audits and data tests
        read through it, so a chunk is checked and built on its own rows before
        anything is published, and a command that does not build a model reads it as
        published.
    --#}
    {%- if not execute -%}{{ return(relation) }}{%- endif -%}
    {%- set node = refill_node_of(relation) -%}
    {%- if node is not none and node.config.materialized == 'partitioned' and refill_builds(node) -%}
        {%- set shadow = refill_shadow_relation(relation) -%}
        {%- if selected_resources | length == 0 and target.type == 'duckdb'
            and not refill_table_exists(shadow.schema, shadow.identifier) -%}
            {{ exceptions.raise_compiler_error(
                "refill window: this dbt retry does not rebuild " ~ node.name ~ ", which " ~ model.name
                ~ " reads; rebuild the window instead (dbt build --vars ...), nothing written") }}
        {%- endif -%}
        {{ return(shadow) }}
    {%- endif -%}
    {{ return(relation) }}
{% endmacro %}
