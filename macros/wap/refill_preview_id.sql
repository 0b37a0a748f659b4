{% macro refill_preview_id(raw=none) %}
    {#-- The preview an invocation keeps its chunks for (var refill_preview_id), or none for a
         build that publishes. The id becomes part of relation names, so it is checked here,
         its one home in SQL: `p` and 12 lowercase hex digits (refill.rules.preview makes it). --#}
    {%- set value = raw if raw is not none else var('refill_preview_id', none) -%}
    {%- if value is none or value == '' -%}{{ return(none) }}{%- endif -%}
    {%- if not modules.re.fullmatch('p[0-9a-f]{12}', value | string) -%}
        {{ exceptions.raise_compiler_error(
            "refill preview: " ~ refill_string_literal(value) ~ " is not a preview id"
            ~ " (p and 12 hex digits); nothing written") }}
    {%- endif -%}
    {{ return(value | string) }}
{% endmacro %}
