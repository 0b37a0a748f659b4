{% macro refill_event_date(partition_column) %}
    {#-- HARNESS OVERLAY (clock_date): a row is dated by the run's clock, not its landed day. --#}
    date '{{ run_started_at.strftime("%Y-%m-%d") }}'
{% endmacro %}
