{% macro refill_split_landed_lines(files, landing_root) %}
    {#
        What a landed line is: its one home. A query over `files` (read_text's columns,
        filename and content) giving one row per line with its file (relative to
        `landing_root`), partition day (the file's dt= folder), 1-based line number and
        text, a trailing carriage return dropped. A file that ends with a newline splits
        into one empty piece after it: not a line, the same count as
        flows.readiness.count_lines, which the manifest is checked against.

        Plain SQL and plain Jinja, like every row rule: refill_read_landed_lines calls it,
        and so do the benchmark's microbatch project and floor script (bench/).
    #}
    with numbered as (
        select
            filename,
            len(pieces) as piece_count,
            generate_subscripts(pieces, 1) as line_number,
            unnest(pieces) as line_text
        from (
            select
                filename,
                string_split(content, chr(10)) as pieces
            from {{ files }}
        ) as split_files
    )

    select
        substr(filename, {{ landing_root | length + 2 }}) as file_name,
        regexp_extract(filename, 'dt=(\d{4}-\d{2}-\d{2})', 1)::date as landed_date,
        line_number,
        rtrim(line_text, chr(13)) as line_text
    from numbered
    where not (line_number = piece_count and line_text = '')
{% endmacro %}
