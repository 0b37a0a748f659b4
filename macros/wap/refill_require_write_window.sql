{% macro refill_require_write_window() %}
    {#-- A write of partitions with --full-refresh rebuilds every landed day: a window given
         with it is a contradiction, refused before anything is written. Checked where
         partitions are written, not in refill_window, so unit tests (which set their own
         window vars) and read-only commands are not refused under --full-refresh. --#}
    {%- if should_full_refresh() and (var('start_date', none) is not none or var('end_date', none) is not none) -%}
        {{ exceptions.raise_compiler_error(
            "refill window: --full-refresh rebuilds every landed day; drop start_date/end_date, "
            ~ "or rebuild the window without --full-refresh") }}
    {%- endif -%}
{% endmacro %}
