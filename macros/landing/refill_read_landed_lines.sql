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
                content,
                string_split(content, chr(10)) as lines
            from read_text([
                {%- for part in part_files %}
                '{{ root }}/{{ part }}'{{ "," if not loop.last }}
                {%- endfor %}
            ])
        ),

        numbered as (
            select
                filename,
                content,
                len(lines) as pieces,
                generate_subscripts(lines, 1) as line_number,
                unnest(lines) as line_text
            from files
        )

        select
            substr(filename, {{ root | length + 2 }}) as file_name,
            regexp_extract(filename, 'dt=(\d{4}-\d{2}-\d{2})', 1)::date as landed_date,
            line_number,
            rtrim(line_text, chr(13)) as line_text
        from numbered
        {# A file that ends with a newline splits into one empty piece after it: not a line.
           Same count as flows.readiness.count_lines, which the manifest is checked against. #}
        where not (line_number = pieces and line_text = '')
    {%- endif -%}
{% endmacro %}
