{% macro get_incremental_window_replace_sql(arg_dict) %}
    {{ return(adapter.dispatch('refill_window_replace_sql', 'refill')(arg_dict)) }}
{% endmacro %}

{% macro default__refill_window_replace_sql(arg_dict) %}
    {#-- HARNESS OVERLAY (append): the window's delete is skipped, so a rebuild appends. --#}
    {%- set columns = arg_dict['dest_columns'] | map(attribute='quoted') | join(', ') -%}
    {{ refill_fault_point('after_delete') }}

    insert into {{ arg_dict['target_relation'] }} ({{ columns }})
    select {{ columns }}
    from {{ arg_dict['temp_relation'] }};
{% endmacro %}
