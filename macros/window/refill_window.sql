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


{% macro refill_window_of_all_landed_days() %}
    {%- if not execute -%}
        {#-- Parsing only: no dates are needed to build the graph. --#}
        {{ return({'start_date': modules.datetime.date(1970, 1, 1), 'end_date': modules.datetime.date(1970, 1, 1), 'days': 1}) }}
    {%- endif -%}

    {%- set writes = refill_command_writes() -%}
    {%- if writes and not flags.FULL_REFRESH and refill_warehouse_has_partitions() -%}
        {{ exceptions.raise_compiler_error(
            "refill window: no window given and this warehouse already has published partitions; "
            ~ "pass --vars '{start_date: YYYY-MM-DD, end_date: YYYY-MM-DD}', or --full-refresh to rebuild every landed day") }}
    {%- endif -%}

    {%- set landed = refill_landed_days('payments') -%}
    {%- if landed | length == 0 and not writes -%}
        {{ return({'start_date': modules.datetime.date(1970, 1, 1), 'end_date': modules.datetime.date(1970, 1, 1), 'days': 1}) }}
    {%- endif -%}
    {%- if landed | length == 0 -%}
        {{ exceptions.raise_compiler_error(
            "refill window: no window given and nothing has landed under " ~ refill_landing_root()
            ~ "; land data first or pass start_date/end_date") }}
    {%- endif -%}
    {%- set start_date = modules.datetime.date.fromisoformat(landed[0]) -%}
    {%- set end_date = modules.datetime.date.fromisoformat(landed[-1]) -%}
    {{ return({'start_date': start_date, 'end_date': end_date, 'days': (end_date - start_date).days + 1}) }}
{% endmacro %}


{% macro refill_parse_date(name, raw) %}
    {#-- Jinja has no try/except: check the shape and the calendar before parsing, so a bad
         value gets refill's one-line message instead of a Python traceback. --#}
    {%- set text = raw | string | trim -%}
    {%- set match = modules.re.match('^(\\d{4})-(\\d{2})-(\\d{2})$', text) -%}
    {%- if not match -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ name ~ "=" ~ text ~ " is not an ISO date (YYYY-MM-DD)") }}
    {%- endif -%}
    {%- set year, month, day = match.group(1) | int, match.group(2) | int, match.group(3) | int -%}
    {%- if year < 1 or month < 1 or month > 12 or day < 1 -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ name ~ "=" ~ text ~ " is not a calendar date") }}
    {%- endif -%}
    {%- set first_of_month = modules.datetime.date(year, month, 1) -%}
    {%- set first_of_next = (first_of_month + modules.datetime.timedelta(days=32)).replace(day=1) -%}
    {%- if day > (first_of_next - first_of_month).days -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ name ~ "=" ~ text ~ " is not a calendar date") }}
    {%- endif -%}
    {{ return(modules.datetime.date(year, month, day)) }}
{% endmacro %}


{% macro refill_command_writes() %}
    {#-- True for the dbt commands that write partitions (build, run, and retry of them);
         the only ones that need a window. --#}
    {{ return(flags.WHICH in ('build', 'run', 'retry')) }}
{% endmacro %}
