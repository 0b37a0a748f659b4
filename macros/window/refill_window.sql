{% macro refill_window() %}
    {#--
        The one home of the window: the inclusive dates every partitioned model reads
        and writes, from the `start_date` / `end_date` vars. Validated here, once, for
        every model, so a bad window stops before anything is written.

        Without vars, a command that writes partitions (build, run): a full refresh, or
        the first build of an empty warehouse, covers every landed day; an existing
        warehouse refuses, because "no window" there almost always means a forgotten
        --vars and would rewrite all of history. A read-only command (compile, show,
        docs generate, test, ls, parse) needs no window: it gets every landed day (a
        dummy day when nothing has landed) and writes nothing.
        (--full-refresh with a window is refused where partitions are written:
        refill_require_write_window.)

        Returns {'start_date': date, 'end_date': date, 'days': int}.
    --#}
    {%- do refill_require_known_vars() -%}
    {%- set start_raw = var('start_date', none) -%}
    {%- set end_raw = var('end_date', none) -%}
    {%- set has_window = start_raw is not none or end_raw is not none -%}

    {%- if not has_window -%}
        {{ return(refill_window_of_all_landed_days()) }}
    {%- endif -%}

    {%- if start_raw is none or end_raw is none -%}
        {{ exceptions.raise_compiler_error(
            "refill window: start_date and end_date go together; got start_date="
            ~ start_raw ~ ", end_date=" ~ end_raw) }}
    {%- endif -%}

    {%- set start_date = refill_parse_date('start_date', start_raw) -%}
    {%- set end_date = refill_parse_date('end_date', end_raw) -%}
    {%- if end_date < start_date -%}
        {{ exceptions.raise_compiler_error(
            "refill window: end_date " ~ end_date ~ " is before start_date " ~ start_date) }}
    {%- endif -%}

    {%- set days = (end_date - start_date).days + 1 -%}
    {%- set max_days = var('max_window_days') | int -%}
    {%- if days > max_days and not var('allow_wide_window') -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ start_date ~ ".." ~ end_date ~ " is " ~ days ~ " days, over max_window_days="
            ~ max_days ~ "; use `refill backfill` for history, or pass allow_wide_window: true") }}
    {%- endif -%}

    {{ return({'start_date': start_date, 'end_date': end_date, 'days': days}) }}
{% endmacro %}
