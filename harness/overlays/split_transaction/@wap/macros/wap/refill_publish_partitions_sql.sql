{% macro refill_publish_partitions_sql(target, shadow, partition_column) %}
    {{ return(adapter.dispatch('refill_publish_partitions_sql', 'refill')(target, shadow, partition_column)) }}
{% endmacro %}

{% macro default__refill_publish_partitions_sql(target, shadow, partition_column) %}
    {#-- HARNESS OVERLAY (split_transaction): the window's delete commits on its own,
         before the insert: a reader or a failure sees the days empty. --#}
    delete from {{ target }}
    where {{ refill_window_predicate(partition_column) }};
    commit;
    begin transaction;
    {{ refill_fault_point('after_delete') }}
    insert into {{ target }} by name
    select * from {{ shadow }};
{% endmacro %}
