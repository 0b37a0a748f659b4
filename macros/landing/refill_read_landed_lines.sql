{% macro refill_read_landed_lines(part_files) %}
    {#--
        Every line of the given part files (paths relative to the landing root) as
        text, with its file, 1-based line number and partition day. Lines are read as
        text, not as JSON, because a JSON reader that skips bad lines cannot say which
        line it skipped, and quarantine needs exactly that.
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
        {#-- Only empty days in the window: read_text refuses an empty file list. --#}
        select
            null::varchar as file_name,
            null::date as landed_date,
            null::bigint as line_number,
            null::varchar as line_text
        where false
    {%- else -%}
        {%- set root = refill_landing_root() -%}
        with files as (
            select
                filename,
                content
            from read_text([
                {%- for part in part_files %}
                '{{ root }}/{{ part }}'{{ "," if not loop.last }}
                {%- endfor %}
            ])
        ),

        landed_lines as (
            {{ refill_split_landed_lines('files', root) }}
        )

        select * from landed_lines
    {%- endif -%}
{% endmacro %}
