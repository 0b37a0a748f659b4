{% macro refill_split_landed_lines(files, landing_root) %}
    {#
        What a landed line is: its one home. A query over `files` (read_blob's columns,
        filename and content) giving one row per line with its file (relative to
        `landing_root`), partition day (the file's dt= folder), 1-based line number,
        text (a trailing carriage return dropped) and whether its bytes are valid UTF-8.
        A file that ends with a newline splits into one empty piece after it: not a line,
        the same count as refill.rules.readiness.count_lines, which the manifest is checked
        against.

        A file of valid UTF-8 (the common case) is decoded and split as text. A file
        holding bytes that are not UTF-8 is split on its escaped text form instead:
        DuckDB writes a blob as text with every byte outside printable ASCII, and the
        quote, double quote and backslash, as \xNN, so a newline is exactly '\x0A' and a
        backslash never starts anything else. Each of its lines is then decoded alone:
        a valid one gets its text, as in any other file; one that is not keeps the
        escaped form, valid text from which `line_text::blob` gives the landed bytes back.

        Why it is written this way (measured in docs/performance.md): a file's name and
        day are worked out once a file, before its lines are unnested, and a line's
        carriage returns are trimmed only when it ends with one (DuckDB's rtrim with a
        character set costs more than the rest of the split together).

        Plain SQL and plain Jinja, like every row rule: refill_read_landed_lines calls it,
        and so do the benchmark's microbatch project and floor script (bench/).
    #}
    with decoded as (
        select
            substr(filename, {{ landing_root | length + 2 }}) as file_name,
            content,
            try(decode(content)) as file_text
        from {{ files }}
    ),

    named as (
        select
            file_name,
            regexp_extract(file_name, 'dt=(\d{4}-\d{2}-\d{2})', 1)::date as landed_date,
            content,
            file_text
        from decoded
    ),

    utf8_lines as (
        select
            file_name,
            landed_date,
            len(pieces) as piece_count,
            generate_subscripts(pieces, 1) as line_number,
            unnest(pieces) as line_text,
            true as is_valid_utf8
        from (
            select
                file_name,
                landed_date,
                string_split(file_text, chr(10)) as pieces
            from named
            where file_text is not null
        ) as split_files
    ),

    escaped_pieces as (
        select
            file_name,
            landed_date,
            len(pieces) as piece_count,
            generate_subscripts(pieces, 1) as line_number,
            unnest(pieces) as escaped_text
        from (
            select
                file_name,
                landed_date,
                string_split(content::varchar, '\x0A') as pieces
            from named
            where file_text is null
        ) as split_files
    ),

    escaped_lines as (
        select
            file_name,
            landed_date,
            piece_count,
            line_number,
            coalesce(try(decode(escaped_text::blob)), escaped_text) as line_text,
            try(decode(escaped_text::blob)) is not null as is_valid_utf8
        from escaped_pieces
    ),

    numbered as (
        select * from utf8_lines
        union all
        select * from escaped_lines
    )

    select
        file_name,
        landed_date,
        line_number,
        case
            when not is_valid_utf8 then regexp_replace(line_text, '(\\x0D)+$', '')
            when ends_with(line_text, chr(13)) then rtrim(line_text, chr(13))
            else line_text
        end as line_text,
        is_valid_utf8
    from numbered
    where not (line_number = piece_count and line_text = '')
{% endmacro %}

{% macro spark__refill_split_landed_lines(files) %}
    {#
        What a landed line is, in Spark SQL: the counterpart of refill_split_landed_lines
        (keep the two in step). A query over `files` (file_name relative to the landing
        root, content as bytes) giving one row per line with its file, partition day (the
        dt= folder), 1-based line number, text (trailing carriage returns dropped) and
        whether its bytes are valid UTF-8. A file that ends with a newline splits into one
        empty piece after it: not a line (refill.rules.readiness.count_lines counts the same).

        Decoding as ISO-8859-1 maps each byte to one character, so a newline byte is exactly
        '\n' and encode(..., 'ISO-8859-1') gives each line's bytes back; the UTF-8 test then
        runs on those bytes (Spark's UTF-8 decoding would replace a bad byte and pass).
        A line that is not UTF-8 keeps its bytes as hex (DuckDB keeps its escaped text form).
    #}
    with named as (
        select
            file_name,
            to_date(regexp_extract(file_name, r'dt=(\d{4}-\d{2}-\d{2})', 1)) as landed_date,
            split(decode(content, 'ISO-8859-1'), '\n', -1) as pieces
        from {{ files }}
    ),

    pieces as (
        select
            file_name,
            landed_date,
            size(pieces) as piece_count,
            pos + 1 as line_number,
            piece
        from named
        lateral view posexplode(pieces) exploded as pos, piece
    ),

    lines as (
        select
            file_name,
            landed_date,
            line_number,
            encode(piece, 'ISO-8859-1') as line_bytes
        from pieces
        where not (line_number = piece_count and piece = '')
    )

    select
        file_name,
        landed_date,
        cast(line_number as bigint) as line_number,
        case
            when is_valid_utf8(cast(line_bytes as string))
                then regexp_replace(cast(line_bytes as string), '\r+$', '')
            else hex(line_bytes)
        end as line_text,
        is_valid_utf8(cast(line_bytes as string)) as is_valid_utf8
    from lines
{% endmacro %}
