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
            select
                files.file_name,
                files.content
            from files
            left join verdicts
                on files.file_name = verdicts.part_file and verdicts.is_ready
            where
                case
                    when verdicts.part_sha256 = files.sha256 then true
                    -- raise_error: a view may not call the session's error() function
                    else raise_error(
                        'refill readiness: ' || files.file_name || ' changed after its readiness verdict '
                        || 'in this build, nothing written; build the window again'
                    )
                end
        ),

        landed_lines as (
            {{ spark__refill_split_landed_lines('verified') }}
        )

        select * from landed_lines
    {%- endif -%}
{% endmacro %}
