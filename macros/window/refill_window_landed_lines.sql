{% macro refill_window_landed_lines(dataset) %}
    {#-- A dataset's classified lines (stg_<dataset>__lines) for the window, computed from
         the landing (readiness, the window's part files, the line reader and the
         dataset's declared rule): the composition of its staging models, for a command
         that does not build them. Without a window (a read-only command), every landed
         day: a published day whose landing is gone then fails the test rather than pass
         unchecked. --#}
    with raw_lines as (
        {{ refill_window_raw_lines(dataset) }}
    ),

    classified as (
        {{ refill_classify_landed_lines('raw_lines', refill_lines_rule(dataset)) }}
    )

    select * from classified
{% endmacro %}
