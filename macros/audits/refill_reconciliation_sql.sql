{% macro refill_reconciliation_sql(
        model_relation, partition_column, source_relation, source_partition_column,
        measures, source_measures=none, source_where='1 = 1', for_test=false) %}
    {#--
        One home for "does each partition agree with its source": a query returning one
        row per partition and measure whose published value differs from the source's,
        with both values. Used by the in-transaction audits (which raise on any row) and
        by the `reconciles_with` data test (which fails on any row).

        measures / source_measures: {name: aggregate expression} on each side. A day
        present on one side only compares against zero, so a missing day is caught too.
        for_test: a data test covers the whole table when no window is given (see
        refill_window_test_filter); an audit always has a window.
    --#}
    {%- set source_measures = source_measures or measures -%}
    with published as (
        select
            {{ partition_column }} as partition_date,
            {%- for name, expression in measures.items() %}
            {{ expression }} as {{ name }}{{ "," if not loop.last }}
            {%- endfor %}
        from {{ model_relation }}
        where {{ refill_window_test_filter(partition_column) if for_test else refill_window_predicate(partition_column) }}
        group by 1
    ),

    expected as (
        select
            {{ source_partition_column }} as partition_date,
            {%- for name, expression in source_measures.items() %}
            {{ expression }} as {{ name }}{{ "," if not loop.last }}
            {%- endfor %}
        from {{ source_relation }}
        where {{ refill_window_test_filter(source_partition_column) if for_test else refill_window_predicate(source_partition_column) }}
            and ({{ source_where }})
        group by 1
    ),

    compared as (
        {%- for name in measures %}
        select
            coalesce(published.partition_date, expected.partition_date) as partition_date,
            {{ refill_string_literal(name) }} as measure,
            coalesce(published.{{ name }}, 0) as published_value,
            coalesce(expected.{{ name }}, 0) as source_value
        from published
        full outer join expected
            on published.partition_date = expected.partition_date
        {{ "union all" if not loop.last }}
        {%- endfor %}
    )

    select *
    from compared
    where published_value <> source_value
    order by partition_date, measure
{% endmacro %}
