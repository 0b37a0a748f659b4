{% macro refill_publish(results) %}
    {#--
        HARNESS OVERLAY (separate_commits): the product's on-run-end publish, except that
        each model of the chunk publishes its partitions and ledger rows in a transaction
        of its own, in turn: a failure in a later model (the seam before its ledger rows,
        scoped to that model) or a reader between two commits sees the chunk published
        in some models and not others.
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set chunk = [] -%}
    {%- set failed = [] -%}
    {%- for result in results if result.node is defined and result.node is not none -%}
        {%- if result.status in ('error', 'fail', 'skipped', 'runtime error', 'partial success') -%}
            {%- do failed.append(result.node.name) -%}
        {%- elif result.node.resource_type == 'model' and result.node.config.materialized == 'partitioned' -%}
            {%- do chunk.append(result.node) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if chunk | length == 0 -%}{{ return('') }}{%- endif -%}
    {%- if failed -%}
        {{ return(refill_drop_shadows(chunk)) }}
    {%- endif -%}
    {%- set publishing = chunk | map(attribute='alias') | list -%}
    {%- for node in chunk %}
    {%- set target = refill_node_relation(node) %}
    {%- set shadow = refill_shadow_relation(target) %}
    begin transaction;
    create schema if not exists {{ target.schema }};
    {%- if refill_is_full_refresh(node) %}
    create or replace table {{ target }} as select * from {{ shadow }};
    {%- else %}
    create table if not exists {{ target }} as select * from {{ shadow }} where false;
    {{ refill_publish_partitions_sql(target, shadow, node.config.partition_column) }}
    {%- endif %}
    {{ refill_fault_point('before_ledger', target.identifier) }}
    delete from ops.partition_ledger
    where model_name = {{ refill_string_literal(target.identifier) }}
    {%- if not refill_is_full_refresh(node) %}
        and {{ refill_window_predicate('partition_date') }}
    {%- endif %};
    insert into ops.partition_ledger by name
    select * from {{ refill_shadow_relation(target, '__ledger') }};
    commit;
    {%- endfor %}
    {#-- The staged statements and the consumer views once every model's table exists. --#}
    begin transaction;
    {%- for node in chunk %}
    {%- for statement in refill_staged_statements(refill_node_relation(node)) %}
    {{ statement }};
    {%- endfor %}
    {%- endfor %}
    {%- set versioned = [] -%}
    {%- for node in chunk if node.version is not none and node.name not in versioned -%}
        {%- do versioned.append(node.name) -%}
    {%- endfor %}
    {%- for model_name in versioned %}
    {{ refill_create_version_view(model_name, publishing) }};
    {%- endfor %}
    commit;
    {{ refill_drop_shadows(chunk) }}
{% endmacro %}
