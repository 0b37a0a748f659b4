{% materialization table, adapter='spark' %}
    {#--
        Spark (replaces dbt-spark's for this project): a work table (staging) written to
        the window's own relation (refill_window_relation), which every ref() of this build
        reads, external at the window's own folder (spark__location_clause). Chunks built at
        once therefore never share a work table, in a process's catalog or a cluster's
        metastore. Parquet, no Delta or Iceberg, no Python models.
    --#}
    {%- set target_relation = refill_window_relation(this.incorporate(type='table')) -%}
    {{ run_hooks(pre_hooks) }}
    {%- do run_query("drop table if exists " ~ target_relation) -%}
    {%- call statement('main') -%}
        {{ create_table_as(False, target_relation, sql) }}
    {%- endcall -%}
    {%- do persist_docs(target_relation, model) -%}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{% materialization view, adapter='spark' %}
    {#-- Spark (replaces dbt-spark's for this project): a work view (staging) is the window's
         own too (refill_window_relation): the chunks' views of one name would read each
         other's files. --#}
    {%- set target_relation = refill_window_relation(this.incorporate(type='view')) -%}
    {{ run_hooks(pre_hooks) }}
    {%- call statement('main') -%}
        {{ create_view_as(target_relation, sql) }}
    {%- endcall -%}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
