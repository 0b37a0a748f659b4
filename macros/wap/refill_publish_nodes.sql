{% macro refill_publish_nodes(chunk, also=[]) %}
    {{ return(adapter.dispatch('refill_publish_nodes', 'refill')(chunk, also)) }}
{% endmacro %}

{% macro default__refill_publish_nodes(chunk, also=[]) %}
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

{% macro spark__refill_publish_nodes(chunk, also=[]) %}
    {#--
        Spark: the publish of one chunk without a multi-table transaction (parquet has
        none), rendered by spark__refill_publish (a build) and spark__refill_publish_preview
        (a chunk a preview kept). In order:
          1. each model's window replaced from its shadow (spark__refill_publish_partitions_sql:
             a dynamic overwrite of the days the chunk has, and the window's other days
             cleared, so an empty day ends empty), models in the order dbt built them;
          2. the ledger rows of the whole chunk, LAST, in one statement (a dynamic overwrite
             of ops.partition_ledger's (model, day) partitions): the ledger never claims a
             day whose data was not replaced; then `also` (a preview's publish marks its chunk:
             a crash before the mark republishes the same rows, which converges);
          3. the statements the chunk staged (views refill cutover reads), the consumer views;
          4. the shadows emptied and dropped.
        A crash anywhere leaves the ledger as it was for the chunk's days (or all of step 2
        done), and rerunning the chunk converges: each step replaces, never appends. Each
        crash window and why it is harmless: docs/guarantees.md, "Engines".
        Runs its statements itself (Spark takes one per call); renders nothing.
    --#}
    {%- set publishing = chunk | map(attribute='alias') | list -%}
    {%- for node in chunk -%}
        {%- set target = refill_node_relation(node) -%}
        {%- set shadow = refill_shadow_relation(target) -%}
        {%- set partition_column = node.config.partition_column -%}
        {%- if refill_is_full_refresh(node) -%}
            {#-- Every landed day: the table's files become the shadow's rows (a static
                 overwrite of the whole folder), then it is registered again with its
                 dynamic option, which every later window's publish relies on. First, the
                 ledger forgets the days the shadow lacks (refill_spark_forget_unbuilt_days). --#}
            {%- do refill_spark_forget_unbuilt_days(node) -%}
            {%- do run_query("drop table if exists " ~ target) -%}
            {%- do run_query("create schema if not exists " ~ target.schema) -%}
            {%- do run_query("create table " ~ target
                ~ " using parquet options (partitionOverwriteMode 'static') partitioned by (" ~ partition_column ~ ")"
                ~ " location " ~ refill_spark_location(target) ~ " as select * from " ~ shadow) -%}
            {%- do run_query("drop table " ~ target) -%}
            {%- do refill_spark_register(target) -%}
        {%- else -%}
            {%- set columns = [] -%}
            {%- for column in adapter.get_columns_in_relation(shadow) -%}
                {%- do columns.append(column.name ~ ' ' ~ column.data_type) -%}
            {%- endfor -%}
            {%- do refill_spark_register(target, columns | join(', '), partition_column) -%}
            {%- do refill_publish_partitions_sql(target, shadow, partition_column) -%}
        {%- endif -%}
    {%- endfor -%}

    {%- set ledgers = [] -%}
    {%- for node in chunk -%}
        {%- do ledgers.append('select * from ' ~ refill_shadow_relation(refill_node_relation(node), '__ledger')) -%}
    {%- endfor -%}
    {%- do run_query(
        "insert overwrite table ops.partition_ledger partition (model_name, partition_date)"
        ~ " select " ~ refill_spark_ledger_names() | join(', ')
        ~ " from (" ~ ledgers | join(' union all ') ~ ") as chunk_ledger") -%}
    {%- for statement in also -%}{%- do run_query(statement) -%}{%- endfor -%}

    {%- for node in chunk -%}
        {%- set staged = refill_shadow_relation(refill_node_relation(node), '__on_publish') -%}
        {%- set found = run_query(
            "show tables in " ~ staged.schema ~ " like " ~ refill_string_literal(staged.identifier)) -%}
        {%- if found.rows | length > 0 -%}
            {%- for statement in run_query('select statement from ' ~ staged).columns[0].values() -%}
                {%- do refill_spark_run_view_ddl(statement) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set versioned = [] -%}
    {%- for node in chunk if node.version is not none and node.name not in versioned -%}
        {%- do versioned.append(node.name) -%}
    {%- endfor -%}
    {%- for model_name in versioned -%}
        {%- set view_sql = refill_create_version_view(model_name, publishing) -%}
        {%- if view_sql | trim -%}{%- do refill_spark_run_view_ddl(view_sql) -%}{%- endif -%}
    {%- endfor -%}
    {%- do refill_spark_drop_shadows(chunk) -%}
    {{ return('') }}
{% endmacro %}
