{% macro refill_read_landed_lines(part_files) %}
    {#--
        Every line of the given part files (paths relative to the landing root) as
        text, with its file, 1-based line number, partition day and whether its bytes
        were valid UTF-8. Lines are read as text, not as JSON, because a JSON reader that
        skips bad lines cannot say which line it skipped, and quarantine needs exactly
        that. The paths were validated by the readiness rule (refill/rules/readiness.py) and
        reach SQL only through refill_string_literal.
    --#}
    {{ return(adapter.dispatch('refill_read_landed_lines', 'refill')(part_files)) }}
{% endmacro %}

{% macro default__refill_read_landed_lines(part_files) %}
    {{ exceptions.raise_compiler_error(
        "refill: reading landed lines is not implemented for adapter " ~ adapter.type()
        ~ "; add a " ~ adapter.type() ~ "__refill_read_landed_lines macro") }}
{% endmacro %}

{% macro duckdb__refill_read_landed_lines(part_files) %}
    {%- if part_files | length == 0 -%}
        {#-- Only empty days in the window: read_blob refuses an empty file list. --#}
        select
            null::varchar as file_name,
            null::date as landed_date,
            null::bigint as line_number,
            null::varchar as line_text,
            null::boolean as is_valid_utf8
        where false
    {%- else -%}
        {%- set root = refill_landing_root() -%}
        {#-- read_blob, not read_text: read_text refuses a whole file for one line that is
             not UTF-8; the row rule decodes, and quarantines just that line. --#}
        with files as (
            select
                filename,
                content
            from read_blob([
                {%- for part in part_files %}
                {{ refill_string_literal(root ~ '/' ~ part) }}{{ "," if not loop.last }}
                {%- endfor %}
            ])
        ),

        landed_lines as (
            {{ refill_split_landed_lines('files', root) }}
        )

        select * from landed_lines
    {%- endif -%}
{% endmacro %}
