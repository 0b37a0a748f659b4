{% macro refill_require_same_columns(shadow, target_relation) %}
    {#-- A chunk must have the published table's columns (dbt's on_schema_change: fail):
         a changed model restates history with --full-refresh, or a backfill per window
         after the change is released with its migration. --#}
    {%- set existing = load_relation(target_relation) -%}
    {%- if existing is none -%}{{ return('') }}{%- endif -%}
    {%- set published = adapter.get_columns_in_relation(existing) | map(attribute='name') | map('lower') | list -%}
    {%- set written = adapter.get_columns_in_relation(shadow) | map(attribute='name') | map('lower') | list -%}
    {%- if published != written -%}
        {{ exceptions.raise_compiler_error(
            "refill publish: " ~ this.identifier ~ " now has columns (" ~ written | join(', ')
            ~ ") but the published table has (" ~ published | join(', ')
            ~ "); rebuild it with --full-refresh; nothing written") }}
    {%- endif -%}
{% endmacro %}
