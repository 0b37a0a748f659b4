{% macro refill_spark_ledger_names() %}
    {#-- Spark: the ledger's columns in the order its partitioned tables hold them (the
         partition columns model_name, partition_date last): the select list of every
         overwrite of ops.partition_ledger or of a preview's kept ledger. --#}
    {%- set names = [] -%}
    {%- for name, _, _ in refill_ops_columns('partition_ledger')
            if name not in ('model_name', 'partition_date') -%}
        {%- do names.append(name) -%}
    {%- endfor -%}
    {{ return(names + ['model_name', 'partition_date']) }}
{% endmacro %}
