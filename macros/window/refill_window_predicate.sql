{% macro refill_window_predicate(column) %}
    {#-- `column` inside the window; the filter every partitioned read, delete and test uses. --#}
    {%- set window = refill_window() -%}
    {{ column }} between {{ refill_date_literal(window.start_date) }} and {{ refill_date_literal(window.end_date) }}
{%- endmacro %}
