{% macro refill_drop_abandoned_work() %}
    {#-- on-run-start: what a killed chunk left in the work schemas, dropped before this
         command builds, never what a live chunk is building. Renders nothing. --#}
    {{ return(adapter.dispatch('refill_drop_abandoned_work', 'refill')()) }}
{% endmacro %}

{% macro default__refill_drop_abandoned_work() %}
    {#-- DuckDB: one writer at a time and one shadow per model, so a killed build's shadows
         are the ones the model's next build replaces; a killed publish commits nothing. --#}
    {{ return('') }}
{% endmacro %}

{% macro spark__refill_drop_abandoned_work() %}
    {#--
        Spark: every work table and view a chunk names for its window (shadows and their
        ledger and staged statements in `wap`, the readiness verdicts and the binaryFile
        table there, the work tables and views of staging: `<name>__<first day>_<last day>`)
        whose window shares a day with this command's is dropped, its folder emptied
        first where it is the chunk's own (the landing's files are never touched). A chunk
        drops its own after its publish; these are a killed (or failed) chunk's. A window
        that shares a day with this one is never a live chunk's: no two chunks build over
        one day at once (refill's day locks, flows/scheduler.py), so a live chunk's work,
        over other days, is left alone. Only a command that writes, with a window (or a
        full refresh: every landed day).
    --#}
    {%- if not execute or not refill_command_writes() -%}{{ return('') }}{%- endif -%}
    {%- if var('start_date', none) is none and not flags.FULL_REFRESH -%}{{ return('') }}{%- endif -%}
    {%- set window = refill_window() -%}
    {%- set kinds = {} -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' -%}
        {%- set relation = refill_node_relation(node) -%}
        {%- if node.config.materialized == 'partitioned' -%}
            {%- do kinds.update({('wap', relation.schema ~ '__' ~ relation.identifier): 'shadow'}) -%}
        {%- elif node.config.materialized in ('table', 'view') -%}
            {%- do kinds.update({(relation.schema, relation.identifier): node.config.materialized}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do kinds.update({('wap', 'landed_files'): 'landing'}) -%}

    {%- set schemas = [] -%}
    {%- for schema, _ in kinds if schema not in schemas -%}{%- do schemas.append(schema) -%}{%- endfor -%}
    {%- for schema in schemas if run_query("show databases like " ~ refill_string_literal(schema)).rows -%}
        {%- for row in run_query("show tables in " ~ schema).rows -%}
            {%- set found = modules.re.fullmatch('(.+)__([0-9]{8})_([0-9]{8})(__ledger|__on_publish)?', row[1]) -%}
            {%- set kind = kinds.get((schema, found.group(1))) if found else none -%}
            {%- if found and kind is none and schema == 'wap' and found.group(1).endswith('__readiness') -%}
                {%- set kind = 'landing' -%}
            {%- endif -%}
            {%- if kind and found.group(2) <= window.end_date.strftime('%Y%m%d')
                    and found.group(3) >= window.start_date.strftime('%Y%m%d') -%}
                {%- set left = api.Relation.create(schema=schema, identifier=row[1], type='table') -%}
                {%- if kind == 'view' -%}
                    {%- do run_query("drop view if exists " ~ left) -%}
                {%- elif kind == 'landing' -%}
                    {%- do run_query("drop table if exists " ~ left) -%}
                {%- else -%}
                    {%- set folder = refill_spark_location(left) if kind == 'shadow' else refill_spark_work_location(
                        left.incorporate(path={'identifier': found.group(1)}), found.group(2) ~ '_' ~ found.group(3)) -%}
                    {%- do refill_spark_empty_table(left, folder) -%}
                {%- endif -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return('') }}
{% endmacro %}
