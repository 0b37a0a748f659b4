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

{% macro spark__refill_publish_partitions_sql(target, shadow, partition_column) %}
    {#-- Spark: the window's days of `target` become exactly the chunk's rows in `shadow`:
         a dynamic overwrite (the table's own option, whatever the session says) replaces
         the days the chunk has, then each window day the chunk lacks is cleared by a
         static overwrite of that one day with no rows. Runs its statements; renders nothing. --#}
    {%- do run_query("insert overwrite table " ~ target ~ " partition (" ~ partition_column ~ ")"
        ~ " select * from " ~ shadow) -%}
    {%- set window = refill_window() -%}
    {%- set absent = run_query(
        "select cast(days.day as string) from (select explode(sequence(date '" ~ window.start_date
        ~ "', date '" ~ window.end_date ~ "', interval 1 day)) as day) as days"
        ~ " where days.day not in (select distinct " ~ partition_column ~ " from " ~ shadow ~ ")"
        ~ " order by 1").columns[0].values() -%}
    {%- if absent | length > 0 -%}
        {%- set kept = [] -%}
        {%- for column in adapter.get_columns_in_relation(shadow) if column.name != partition_column -%}
            {%- do kept.append(column.name) -%}
        {%- endfor -%}
        {%- for day in absent -%}
            {%- do run_query("insert overwrite table " ~ target ~ " partition (" ~ partition_column
                ~ " = date " ~ refill_string_literal(day) ~ ") select " ~ kept | join(', ')
                ~ " from " ~ shadow ~ " where false") -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
