{% macro refill_spark_run_view_ddl(statement) %}
    {#-- Spark: run `create or replace view <name> as <query>` unless the view already holds
         exactly that query. Spark replaces a view by dropping it and creating it again, so
         two sessions replacing one view at once (chunks publishing together on a cluster,
         one metastore) fail with TABLE_OR_VIEW_ALREADY_EXISTS or _NOT_FOUND; a view is
         made again only when its query changes (the code, or a version built for the first
         time: refill runs such a chunk alone, flows/scheduler.py). Any other statement runs
         as it is. --#}
    {%- set parsed = modules.re.match('(?is)\\s*create\\s+or\\s+replace\\s+view\\s+(\\S+)\\s+as\\s(.*)$', statement) -%}
    {%- if parsed is not none -%}
        {%- set name = parsed.group(1) -%}
        {%- set query = parsed.group(2) -%}
        {%- set schema, _, identifier = name.rpartition('.') -%}
        {%- set found = run_query("show tables in " ~ (schema or 'default') ~ " like "
            ~ refill_string_literal(identifier)) -%}
        {%- if found.rows | length > 0 -%}
            {%- for row in run_query("describe table extended " ~ name).rows
                    if row[0] == 'View Text' and (row[1] | trim) == (query | trim) -%}
                {{ return('') }}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
    {%- do run_query(statement) -%}
    {{ return('') }}
{% endmacro %}
