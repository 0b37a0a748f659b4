{% macro refill_event_date(partition_column) %}
    {#-- The partition date a row is written to: its landed day. The harness's clock_date
         variant dates it by the run instead, the bug refill exists to prevent. --#}
    {%- if refill_broken_variant() == 'clock_date' -%}
        date '{{ run_started_at.strftime("%Y-%m-%d") }}'
    {%- else -%}
        {{ partition_column }}
    {%- endif -%}
{% endmacro %}
