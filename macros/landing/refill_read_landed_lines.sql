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
        {#-- The engine reads each part file through a descriptor the readiness rule opened
             on the very file this build's verdict hashed (refill_hold_part_files, from
             refill/rules/landed_files.py): a path /proc/self/fd/<n>, never the landing's
             path, so a link, a FIFO or another file swapped in after the check is never
             read, and the file is read once. refill_release_part_files (on-run-end, before
             the publish) closes them and refuses a file written to while held. So the read
             lives in the statement that renders it: the raw lines model is ephemeral.
             Two readers, the same lines (refill_split_landed_lines says what a line is).
             A text file the engine's line reader can stream (readiness's
             PartSummary.line_ending: valid UTF-8, no 0x1f or NUL byte, no byte order mark,
             no line over 1 MiB, and every line ended by "\n" with no carriage return, or
             every one by "\r\n" with no other carriage return) is streamed by read_csv as
             one text column, a batch at a time, numbered by WITH ORDINALITY in file order:
             memory does not grow with the file, and a day cannot be split. For such a file
             read_csv's lines are the rule's: a newline (with its carriage return, in a CRLF
             file) ends a line, an empty line comes back null (read as ''), a final newline
             starts no line. Any other file is read whole by the exact rule. While parsing
             (no execute) nothing is held and the SQL only has to be well formed. --#}
        {%- set held = [] -%}
        {%- if execute -%}
            {%- set literals = [] -%}
            {%- for part in part_files -%}{%- do literals.append(refill_string_literal(part)) -%}{%- endfor -%}
            {%- set checked = run_query(
                "select unnest(refill_hold_part_files([" ~ (literals | join(", ")) ~ "]), recursive := true)"
            ) -%}
            {%- for row in checked.rows -%}
                {%- do held.append({'part': row[0], 'path': row[1], 'line_ending': row[2]}) -%}
            {%- endfor -%}
        {%- else -%}
            {%- for part in part_files -%}
                {%- do held.append({'part': part, 'path': root ~ '/' ~ part, 'line_ending': none}) -%}
            {%- endfor -%}
        {%- endif -%}
        {#-- The query is assembled as data (refill_with_ctes): a CTE per streamed file, the
             whole-file read of the others, and their union, whichever of them there are. --#}
        {%- set ctes = [] -%}
        {%- set readers = [] -%}
        {%- set exact_files = [] -%}
        {%- for file in held | sort(attribute='part') -%}
            {%- if file.line_ending is none -%}
                {#-- read_blob, not read_text: read_text refuses a whole file for one line
                     that is not UTF-8; the row rule decodes, and quarantines just that line.
                     The file's name is the landing's, not the descriptor's. --#}
                {%- do exact_files.append(
                    'select ' ~ refill_string_literal(root ~ '/' ~ file.part) ~ ' as filename, content'
                    ~ ' from read_blob(' ~ refill_string_literal(file.path) ~ ')') -%}
            {%- else -%}
                {%- set body -%}
                select
                    {{ refill_string_literal(file.part) }} as file_name,
                    regexp_extract(file_name, 'dt=(\d{4}-\d{2}-\d{2})', 1)::date as landed_date,
                    ordinality as line_number,
                    coalesce(line, '') as line_text,
                    true as is_valid_utf8
                from read_csv(
                    {{ refill_string_literal(file.path) }},
                    columns = {'line': 'VARCHAR'},
                    header = false,
                    delim = chr(31),
                    quote = '',
                    escape = '',
                    {%- if file.line_ending == '\r\n' %}
                    new_line = '\r\n',
                    {%- endif %}
                    auto_detect = false
                ) with ordinality
                {%- endset -%}
                {%- do ctes.append(('plain_' ~ loop.index, body)) -%}
                {%- do readers.append('plain_' ~ loop.index) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- if exact_files -%}
            {%- do ctes.append(('files', exact_files | join('\nunion all\n'))) -%}
            {%- do ctes.append(('exact_lines', refill_split_landed_lines('files', root))) -%}
            {%- do readers.append('exact_lines') -%}
        {%- endif -%}
        {%- set selects = [] -%}
        {%- for reader in readers -%}{%- do selects.append('select * from ' ~ reader) -%}{%- endfor -%}
        {%- do ctes.append(('landed_lines', selects | join('\nunion all\n'))) -%}
        {{ refill_with_ctes(ctes, 'select * from landed_lines') }}
    {%- endif -%}
{% endmacro %}

{% macro spark__refill_read_landed_lines(part_files) %}
    {#--
        Spark: the window's part files read as bytes (binaryFile: Spark's text reader would
        replace bytes that are not UTF-8 and give no line number), each checked against the
        sha256 its readiness verdict took in this build (spark__refill_window_readiness) in
        the same statement, then split into lines by spark__refill_split_landed_lines. The paths
        reach Spark only as one string literal in a table's options: an exact-file glob
        `<root>/{a,b}`, safe because the readiness rule admits no glob character in a part
        file's name and the root is refused here if it holds one.
    --#}
    {%- if part_files | length == 0 -%}
        select
            cast(null as string) as file_name,
            cast(null as date) as landed_date,
            cast(null as bigint) as line_number,
            cast(null as string) as line_text,
            cast(null as boolean) as is_valid_utf8
        where false
    {%- else -%}
        {%- set root = refill_landing_root() -%}
        {%- if modules.re.search('[*?\\[\\]{},\\\\]', root) -%}
            {{ exceptions.raise_compiler_error(
                "refill input: REFILL_LANDING " ~ tojson(root) ~ " holds a glob character; use a plain folder path") }}
        {%- endif -%}
        {%- set window = refill_window() -%}
        {%- set datasets = [] -%}
        {%- for part in part_files if part.split('/')[0] not in datasets -%}
            {%- do datasets.append(part.split('/')[0]) -%}
        {%- endfor -%}
        {%- set files = api.Relation.create(schema='wap', identifier='landed_files__'
            ~ window.start_date.strftime('%Y%m%d') ~ '_' ~ window.end_date.strftime('%Y%m%d'), type='table') -%}
        {%- do run_query("create schema if not exists wap") -%}
        {%- do run_query("drop table if exists " ~ files) -%}
        {%- do run_query("create table " ~ files ~ " using binaryFile options (path "
            ~ refill_string_literal(root ~ '/{' ~ part_files | join(',') ~ '}') ~ ")") -%}
        with files as (
            select
                substring_index(path, '/', -3) as file_name,
                content,
                sha2(content, 256) as sha256
            from {{ files }}
        ),

        verdicts as (
            {%- for dataset in datasets %}
            select
                part_file,
                part_sha256,
                is_ready
            from {{ refill_spark_readiness_relation(dataset, window) }}
            {{ "union all" if not loop.last }}
            {%- endfor %}
        ),

        verified as (
            {#-- Every file read is one a verdict hashed, with that hash, and every file a
                 verdict hashed was read: Spark's file listing skips what is not a regular
                 file (a FIFO swapped in is never opened, so never waited on), which would
                 otherwise drop its lines unseen. --#}
            select
                files.file_name,
                files.content
            from files
            full outer join (select * from verdicts where is_ready and part_file is not null) as ready
                on files.file_name = ready.part_file
            where
                case
                    when ready.part_sha256 = files.sha256 then true
                    -- raise_error: a view may not call the session's error() function
                    else raise_error(
                        'refill readiness: ' || coalesce(files.file_name, ready.part_file)
                        || ' changed after its readiness verdict in this build, nothing written;'
                        || ' build the window again'
                    )
                end
        ),

        landed_lines as (
            {{ spark__refill_split_landed_lines('verified') }}
        )

        select * from landed_lines
    {%- endif -%}
{% endmacro %}
