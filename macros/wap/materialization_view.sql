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
