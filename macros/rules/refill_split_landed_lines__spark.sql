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
