{% macro refill_publish_partitions_sql(target, shadow, partition_column) %}
    {#-- The partition replace statement of the publish: the window's partitions of
         `target` become exactly the chunk's rows in `shadow`. Its own file so a broken
         harness variant (append, split_transaction) is one small overlay of it. --#}
    {{ return(adapter.dispatch('refill_publish_partitions_sql', 'refill')(target, shadow, partition_column)) }}
{% endmacro %}

{% macro default__refill_publish_partitions_sql(target, shadow, partition_column) %}
    {#-- Delete by the window, not by the days present in the chunk: a day whose new data
         is empty must end empty, not keep its old rows. --#}
    delete from {{ target }}
    where {{ refill_window_predicate(partition_column) }};
    {{ refill_fault_point('after_delete') }}
    insert into {{ target }} by name
    select * from {{ shadow }};
{% endmacro %}
