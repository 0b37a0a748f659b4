{% macro refill_publish_nodes(chunk, also=[]) %}
    {#--
        The publish transaction of one chunk: the shadows of `chunk` (partitioned model
        nodes, each written and audited) moved into place, their ledger rows, their staged
        statements and the consumer views of versioned models, in one transaction, then the
        shadows dropped. Rendered by refill_publish (on-run-end of a build) and by
        refill_publish_preview (a chunk kept by a preview): one publish SQL for both. `also`:
        statements that commit with the chunk (a preview's publish marks its chunk).
    --#}
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
    {%- for statement in also %}
    {{ statement }};
    {%- endfor %}
    {{ refill_fault_point('before_commit') }}
    commit;
    {{ refill_drop_shadows(chunk) }}
{% endmacro %}
