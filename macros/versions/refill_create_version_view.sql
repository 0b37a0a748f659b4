{% macro refill_create_version_view(model_name, publishing=[]) %}
    {{ return(adapter.dispatch('refill_create_version_view', 'refill')(model_name, publishing)) }}
{% endmacro %}

{% macro default__refill_create_version_view(model_name, publishing=[]) %}
    {#--
        Rendered by refill_publish, inside its transaction, when a version of
        `model_name` is published: (re)create the consumer view <schema>.<model_name>
        over the versions built so far and those being published (`publishing`, their
        table names). The view does not name a
        version; each branch is guarded by the pointer row, read inside the reader's
        own query. One query sees one pointer value, so a reader gets all of one
        version or all of the other, never a mix, and a switch is one UPDATE
        (refill/warehouse/cutover_store.py). Re-creating it in a build therefore never moves
        the pointer.

        The view is a macro's and not a dbt model's because dbt's versioned model owns
        the name `model_name` (its refs resolve to latest_version).
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set model = refill_versioned_models()[model_name] -%}
    {%- set versions = model.versions -%}
    {%- set schema = (versions.values() | first).schema -%}

    {%- set pointer = run_query(
        "select current_version from ops.version_pointer where model_name = " ~ refill_string_literal(model_name)) -%}
    {%- if pointer.rows | length > 0 and (pointer.columns[0].values()[0] | int) not in versions -%}
        {{ exceptions.raise_compiler_error(
            "refill versions: this warehouse serves " ~ model_name ~ " v" ~ pointer.columns[0].values()[0]
            ~ ", which the code no longer has; `refill cutover " ~ model_name ~ " --to N` first, then remove it") }}
    {%- endif -%}

    {%- set built = run_query(
        "select table_name from information_schema.tables where table_schema = '" ~ schema
        ~ "' and table_type = 'BASE TABLE'") -%}
    {%- set built_names = built.columns[0].values() -%}
    {%- set branches = [] -%}
    {%- for version, relation in versions | dictsort -%}
        {%- if relation.identifier in built_names or relation.identifier in publishing -%}
            {%- do branches.append(
                "select * from " ~ relation ~ " where (select current_version from ops.version_pointer"
                ~ " where model_name = " ~ refill_string_literal(model_name) ~ ") = " ~ version) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if branches | length == 0 -%}{{ return('') }}{%- endif -%}

    create or replace view {{ schema }}.{{ model_name }} as
    {{ branches | join('\nunion all by name\n') }}
{% endmacro %}

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
