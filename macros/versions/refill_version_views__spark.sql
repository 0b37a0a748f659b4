{% macro spark__refill_version_views(model_name) %}
    {#-- Spark (`refill cutover`, as a run-operation): (re)create in this session the views
         a cutover reads and serves. Spark's in-memory catalog keeps a view only in the
         process that made it, and a cutover is a process of its own: each built version's
         ops.<version>__expected (its rules, `<model_name>_expected_sql(version)`, the macro
         the version's publish stages the same view with) and the consumer view, which
         reads the latest pointer row at query time, so making it never moves the pointer.
         Writes no table. Runs its statements itself; renders nothing. --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set models = refill_versioned_models() -%}
    {%- if model_name not in models -%}
        {{ exceptions.raise_compiler_error("refill versions: " ~ model_name ~ " is not a versioned model") }}
    {%- endif -%}
    {%- set rules = context.get(model_name ~ '_expected_sql') -%}
    {%- if rules is none -%}
        {{ exceptions.raise_compiler_error(
            "refill versions: " ~ model_name ~ " has no rules macro " ~ model_name ~ "_expected_sql(version)") }}
    {%- endif -%}
    {%- set versions = models[model_name].versions -%}
    {%- set schema = (versions.values() | first).schema -%}
    {%- set built_names = run_query("show tables in " ~ schema).columns[1].values() -%}
    {%- do run_query("create schema if not exists ops") -%}
    {%- for version, relation in versions | dictsort if relation.identifier in built_names -%}
        {%- do refill_spark_run_view_ddl(refill_expected_view_sql(rules(version), relation.identifier)) -%}
    {%- endfor -%}
    {%- set view_sql = refill_create_version_view(model_name) -%}
    {%- if view_sql | trim -%}{%- do refill_spark_run_view_ddl(view_sql) -%}{%- endif -%}
    {{ return('') }}
{% endmacro %}
