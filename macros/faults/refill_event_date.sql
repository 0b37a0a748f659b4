{% macro refill_event_date(partition_column) %}
    {#-- The partition date a row is written to: its landed day. Its own file so that the
         harness's clock_date variant (a row dated by the run, the bug refill exists to
         prevent) is one small overlay of this macro. --#}
    {{ return(partition_column) }}
{% endmacro %}
