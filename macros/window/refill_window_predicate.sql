{% macro refill_window_predicate(column) %}
    {#-- `column` inside the window; the filter every partitioned read, delete and test uses. --#}
    {%- set window = refill_window() -%}
    {{ column }} between date '{{ window.start_date }}' and date '{{ window.end_date }}'
{%- endmacro %}
