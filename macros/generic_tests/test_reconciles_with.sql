{% test reconciles_with(
        model, partition_column, to, to_partition_column, measures, to_measures=none, to_where='1 = 1') %}
    {#-- Fails with one row per partition and measure that differs from `to` over the
         window (the whole table when no window is given). Same query as the
         in-transaction audits: refill_reconciliation_sql. A work table `to` is read
         for the test's window (refill_work_relation), never as another window left it. --#}
    {{ refill_reconciliation_sql(
        model, partition_column, refill_work_relation(to), to_partition_column, measures, to_measures, to_where,
        for_test=true) }}
{% endtest %}
