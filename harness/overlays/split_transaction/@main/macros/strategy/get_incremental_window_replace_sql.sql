{% macro get_incremental_window_replace_sql(arg_dict) %}
    {{ return(adapter.dispatch('refill_window_replace_sql', 'refill')(arg_dict)) }}
{% endmacro %}

{% macro default__refill_window_replace_sql(arg_dict) %}
    {#-- HARNESS OVERLAY (split_transaction): the window's delete commits on its own,
         before the insert: a reader or a failure sees the days empty. --#}
    {%- set partition_column = config.require('partition_column') -%}
    {%- set columns = arg_dict['dest_columns'] | map(attribute='quoted') | join(', ') -%}
    delete from {{ arg_dict['target_relation'] }}
    where {{ refill_window_predicate(partition_column) }};
    commit;
    begin transaction;

    {{ refill_fault_point('after_delete') }}

    insert into {{ arg_dict['target_relation'] }} ({{ columns }})
    select {{ columns }}
    from {{ arg_dict['temp_relation'] }};
{% endmacro %}
