{% test reconciles_with(model, partition_column, to, to_partition_column, measures, to_measures=none, to_where='1 = 1') %}
    {#-- HARNESS OVERLAY (audits_off): the data test finds nothing. --#}
    select 1 as failure where false
{% endtest %}
