{% macro spark__refill_create_version_view(model_name, publishing=[]) %}
    {#-- Spark: the consumer view over the versions built, each branch guarded by the
         pointer read inside the reader's query (the latest pointer row: Spark's parquet
         has no update, so a switch appends one). Positional union: the versions share
         their columns and order (partition column last in each table). --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set model = refill_versioned_models()[model_name] -%}
    {%- set versions = model.versions -%}
    {%- set schema = (versions.values() | first).schema -%}
    {%- set pointer_sql = "(select max_by(current_version, switched_at) from ops.version_pointer where model_name = "
        ~ refill_string_literal(model_name) ~ ")" -%}
    {%- set pointer = run_query("select " ~ pointer_sql) -%}
    {%- set current = pointer.columns[0].values()[0] -%}
    {%- if current is not none and (current | int) not in versions -%}
        {{ exceptions.raise_compiler_error(
            "refill versions: this warehouse serves " ~ model_name ~ " v" ~ current
            ~ ", which the code no longer has; `refill cutover " ~ model_name ~ " --to N` first, then remove it") }}
    {%- endif -%}
    {%- set built_names = run_query("show tables in " ~ schema).columns[1].values() -%}
    {%- set branches = [] -%}
    {%- for version, relation in versions | dictsort -%}
        {%- if relation.identifier in built_names or relation.identifier in publishing -%}
            {%- do branches.append("select * from " ~ relation ~ " where " ~ pointer_sql ~ " = " ~ version) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if branches | length == 0 -%}{{ return('') }}{%- endif -%}
    {{ return("create or replace view " ~ schema ~ "." ~ model_name ~ " as " ~ branches | join(' union all ')) }}
{% endmacro %}
