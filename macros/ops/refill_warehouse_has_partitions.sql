{% macro refill_warehouse_has_partitions() %}
    {#-- True once any partition has been published (the ledger has a row). --#}
    {%- set result = run_query('select count(*) > 0 from ops.partition_ledger') -%}
    {{ return(result.columns[0].values()[0]) }}
{% endmacro %}
