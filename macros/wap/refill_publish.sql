{% macro refill_publish(results) %}
    {{ return(adapter.dispatch('refill_publish', 'refill')(results)) }}
{% endmacro %}

{% macro default__refill_publish(results) %}
    {#--
        on-run-end: publish the invocation's chunks, all in one DuckDB transaction, or
        none. Every partitioned model this invocation built (its shadow written and
        audited, its ledger rows staged) is moved into place: its window's partitions
        replaced by the shadow's rows (refill_publish_partitions_sql), its ledger rows
        replaced, and the consumer views of versioned models re-created. If any node of
        the invocation failed, errored or was skipped (a later model's audit, a data
        test), nothing is published. A kill before the commit leaves every relation as
        it was: DuckDB does not replay an uncommitted transaction. The shadows are
        dropped afterwards (they are work tables; a killed run leaves them for the next
        build of the model, which replaces them).
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
    begin transaction;
    {%- for node in chunk %}
    {%- set target = refill_node_relation(node) %}
    {%- set shadow = refill_shadow_relation(target) %}
    create schema if not exists {{ target.schema }};
    {%- if refill_is_full_refresh(node) %}
    create or replace table {{ target }} as select * from {{ shadow }};
    {%- else %}
    create table if not exists {{ target }} as select * from {{ shadow }} where false;
    {{ refill_publish_partitions_sql(target, shadow, node.config.partition_column) }}
    {%- endif %}
    {%- endfor %}
    {{ refill_fault_point('before_ledger') }}
    {%- for node in chunk %}
    {%- set target = refill_node_relation(node) %}
    delete from ops.partition_ledger
    where model_name = {{ refill_string_literal(target.identifier) }}
    {%- if not refill_is_full_refresh(node) %}
        and {{ refill_window_predicate('partition_date') }}
    {%- endif %};
    insert into ops.partition_ledger by name
    select * from {{ refill_shadow_relation(target, '__ledger') }};
    {%- endfor %}
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
    {{ refill_fault_point('before_commit') }}
    commit;
    {{ refill_drop_shadows(chunk) }}
{% endmacro %}
