{% macro get_incremental_window_replace_sql(arg_dict) %}
    {#--
        incremental_strategy='window_replace': replace exactly the window's partitions.
        dbt-duckdb refuses the built-in name insert_overwrite, so the strategy has its own
        name; dispatch maps it to the engine's native partition overwrite where there is
        one. It runs inside the incremental transaction, before the audits and the ledger
        (post-hooks): an audit that raises rolls the delete and the insert back together.
    --#}
    {{ return(adapter.dispatch('refill_window_replace_sql', 'refill')(arg_dict)) }}
{% endmacro %}

{% macro default__refill_window_replace_sql(arg_dict) %}
    {%- set partition_column = config.require('partition_column') -%}
    {%- set columns = arg_dict['dest_columns'] | map(attribute='quoted') | join(', ') -%}
    {%- set variant = refill_broken_variant() -%}
    {#-- Delete by the window, not by the days present in the new rows: a day whose new
         data is empty must end empty, not keep its old rows. --#}
    {% if variant != 'append' %}
    delete from {{ arg_dict['target_relation'] }}
    where {{ refill_window_predicate(partition_column) }};
    {% endif %}

    {% if variant == 'split_transaction' %}
    commit;
    begin transaction;
    {% endif %}

    {{ refill_fault_point('after_delete') }}

    insert into {{ arg_dict['target_relation'] }} ({{ columns }})
    select {{ columns }}
    from {{ arg_dict['temp_relation'] }};
{% endmacro %}

{% macro spark__refill_window_replace_sql(arg_dict) %}
    {#-- Spark and Databricks overwrite partitions natively (dynamic partition overwrite).
         It replaces the partitions present in the new rows: an empty day keeps its old
         rows there, so a window with empty days should be rebuilt with those days
         cleared first. Not exercised here: this machine has no Spark. --#}
    {{ return(get_incremental_insert_overwrite_sql(arg_dict)) }}
{% endmacro %}
