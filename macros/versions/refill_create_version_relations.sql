{% macro refill_create_version_relations() %}
    {{ return(adapter.dispatch('refill_create_version_relations', 'refill')()) }}
{% endmacro %}

{% macro default__refill_create_version_relations() %}
    {#--
        The version pointer, created before every run (on-run-start). Which version of a
        versioned model consumers read is warehouse state, not code: dbt's
        `latest_version` only says where a fresh warehouse starts. After that the
        pointer moves only by `refill cutover` (and its --rollback), one UPDATE of one
        row, never by a build; the consumer view reads it at query time
        (refill_create_version_view).
    --#}
    create schema if not exists ops;

    {#-- One row per versioned model: the version consumers read now, and the one before it. --#}
    create table if not exists ops.version_pointer (
        model_name varchar not null,
        current_version integer not null,
        previous_version integer,
        switched_at timestamp not null,
        run_id varchar not null
    );

    {#-- Every move of a pointer, the first one included: from, to, when, which run, which command. --#}
    create table if not exists ops.version_switches (
        model_name varchar not null,
        from_version integer,
        to_version integer not null,
        switched_at timestamp not null,
        run_id varchar not null,
        command varchar not null
    );

    {%- for model_name, model in refill_versioned_models().items() %}

    {#-- A fresh warehouse points at latest_version; an existing pointer is left where it is. #}
    insert into ops.version_switches
    select
        {{ refill_string_literal(model_name) }},
        null,
        {{ model.latest_version }},
        {{ refill_run_started_at() }},
        {{ refill_string_literal(refill_run_id()) }},
        'dbt {{ flags.WHICH }}: first pointer of a fresh warehouse, at latest_version'
    where not exists (select 1 from ops.version_pointer where model_name = {{ refill_string_literal(model_name) }});

    insert into ops.version_pointer
    select
        {{ refill_string_literal(model_name) }},
        {{ model.latest_version }},
        null,
        {{ refill_run_started_at() }},
        {{ refill_string_literal(refill_run_id()) }}
    where not exists (select 1 from ops.version_pointer where model_name = {{ refill_string_literal(model_name) }});
    {%- endfor %}
{% endmacro %}

{% macro spark__refill_create_version_relations() %}
    {#-- Spark (on-run-start): the version pointer and its history as parquet tables at
         their folders (registered again by every process). Spark's parquet has no update:
         `refill cutover` on Spark appends a pointer row and the latest row per model wins
         (max_by switched_at: refill.warehouse.cutover_store.append_switch). Runs its statements itself; renders nothing. --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set pointer = api.Relation.create(schema='ops', identifier='version_pointer', type='table') -%}
    {%- do refill_spark_register(pointer,
        "model_name string, current_version int, previous_version int, switched_at timestamp, run_id string") -%}
    {%- do refill_spark_register(api.Relation.create(schema='ops', identifier='version_switches', type='table'),
        "model_name string, from_version int, to_version int, switched_at timestamp, run_id string,"
        ~ " command string") -%}
    {%- do run_query("refresh table ops.version_pointer") -%}
    {%- for model_name, model in refill_versioned_models().items() %}
        {%- set absent = "not exists (select 1 from ops.version_pointer where model_name = "
            ~ refill_string_literal(model_name) ~ ")" -%}
        {%- if run_query("select " ~ absent).columns[0].values()[0] -%}
            {%- do run_query("insert into ops.version_switches select "
                ~ refill_string_literal(model_name) ~ ", null, " ~ model.latest_version ~ ", "
                ~ refill_run_started_at() ~ ", " ~ refill_string_literal(refill_run_id()) ~ ", "
                ~ refill_string_literal('dbt ' ~ flags.WHICH ~ ': first pointer of a fresh warehouse, at latest_version')) -%}
            {%- do run_query("insert into ops.version_pointer select "
                ~ refill_string_literal(model_name) ~ ", " ~ model.latest_version ~ ", null, "
                ~ refill_run_started_at() ~ ", " ~ refill_string_literal(refill_run_id())) -%}
        {%- endif -%}
    {%- endfor %}
    {{ return('') }}
{% endmacro %}
