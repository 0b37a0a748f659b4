{% macro fct_daily_revenue_expected_sql(version, payments=none, fx_rates=none) %}
    {#--
        What fct_daily_revenue v<version> must publish for each day, computed straight
        from fct_payments under that version's rules, one row per day (no market): the
        check the version's audit runs before commit and `refill cutover` runs before a
        switch (both read it as the view ops.fct_daily_revenue_v<version>__expected).
        Written apart from the models on purpose: a check that reused their SQL would
        agree with any mistake in it.

        payments: the fct_payments relation to read; by default the published table. The
        audit and the data test pass the chunk's (refill_chunk_relation).
        fx_rates: the fx_rates_daily relation; by default ref('fx_rates_daily').
    --#}
    {%- set version = version | int -%}
    {%- set payments = payments or ref('fct_payments') -%}
    {%- set fx_rates = fx_rates or ref('fx_rates_daily') -%}
    {%- if version == 1 %}
    with month_average as (
        select
            date_trunc('month', rate_date)::date as rate_month,
            currency,
            avg(usd_per_unit)::decimal(18, 6) as usd_per_unit
        from {{ fx_rates }}
        group by 1, 2
    )

    select
        payments.event_date as partition_date,
        count(*) filter (where payments.status = 'captured') as transactions,
        0 as refunds,
        coalesce(sum(round(payments.amount * month_average.usd_per_unit, 2)::decimal(18, 2))
            filter (where payments.status = 'captured'), 0) as gross_revenue_usd,
        0 as refunds_usd,
        coalesce(sum(round(payments.amount * month_average.usd_per_unit, 2)::decimal(18, 2))
            filter (where payments.status = 'captured'), 0) as revenue_usd
    from {{ payments }} as payments
    left join month_average
        on date_trunc('month', payments.event_date)::date = month_average.rate_month
        and payments.currency = month_average.currency
    group by 1
    {%- elif version == 2 %}
    select
        event_date as partition_date,
        count(*) filter (where status <> 'failed') as transactions,
        count(*) filter (where status = 'refunded') as refunds,
        coalesce(sum(amount_usd) filter (where status = 'captured'), 0) as gross_revenue_usd,
        coalesce(sum(amount_usd) filter (where status = 'refunded'), 0) as refunds_usd,
        coalesce(sum(amount_usd) filter (where status = 'captured'), 0)
            - coalesce(sum(amount_usd) filter (where status = 'refunded'), 0) as revenue_usd
    from {{ payments }}
    group by 1
    {%- else %}
    {{ exceptions.raise_compiler_error(
        "refill: fct_daily_revenue has no version " ~ version ~ "; its rules are versions 1 and 2") }}
    {%- endif %}
{% endmacro %}
