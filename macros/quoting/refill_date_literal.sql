{% macro refill_date_literal(value) %}
    {#--
        The typed literal of a date refill parsed (refill_window, refill_parse_date):
        `date 'YYYY-MM-DD'`, the same text on DuckDB and Spark. Only a date object gets
        through (a string has no isoformat; a datetime's is longer), so no var or landed
        value can reach SQL through here as text.
    --#}
    {%- set iso = value.isoformat() if value is not string and value.isoformat is defined else '' -%}
    {%- if not modules.re.fullmatch('[0-9]{4}-[0-9]{2}-[0-9]{2}', iso) -%}
        {{ exceptions.raise_compiler_error("refill window: " ~ (value | string)[:40] ~ " is not a parsed date") }}
    {%- endif -%}
    {{ return("date '" ~ iso ~ "'") }}
{% endmacro %}
