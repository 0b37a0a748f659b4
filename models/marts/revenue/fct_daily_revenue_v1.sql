{#-
    Daily revenue by market, v1: the legacy method, still the published one. Counts
    captured payments only and converts each at its calendar month's average rate.
    Replaced per window like every partitioned table; before publish each day's totals
    must equal fct_payments' under the same rules, or nothing of the run is published.
-#}
{{
    config(
        partition_column='event_date',
        post_hook=[
            "{{ refill_audit_version_reconciles(
                expected_sql=fct_daily_revenue_expected_sql(1, refill_chunk_relation(ref('fct_payments'))),
                upstream_model='fct_payments') }}",
            "{{ refill_record_partitions(upstream_model='fct_payments') }}",
            "{{ refill_on_publish(refill_expected_view_sql(fct_daily_revenue_expected_sql(1))) }}",
        ],
    )
}}

with payments as (
    -- this chunk's facts when the same command builds them, else the published ones
    select * from {{ refill_chunk_relation(ref('fct_payments')) }}
),

fx_rates as (
    select * from {{ ref('fx_rates_daily') }}
),

window_payments as (
    select *
    from payments
    where {{ refill_window_predicate('event_date') }}
),

monthly_rates as (
    select
        date_trunc('month', rate_date)::date as rate_month,
        currency,
        -- the legacy report's rate: the average of the calendar month's daily rates
        avg(usd_per_unit)::decimal(18, 6) as usd_per_unit
    from fx_rates
    group by 1, 2
),

captured as (
    select
        window_payments.event_date,
        window_payments.market,
        round(window_payments.amount * monthly_rates.usd_per_unit, 2)::decimal(18, 2) as amount_usd
    from window_payments
    left join monthly_rates
        on
            date_trunc('month', window_payments.event_date)::date = monthly_rates.rate_month
            and window_payments.currency = monthly_rates.currency
    -- the legacy method sees captured payments only: no refunds, no failures
    where window_payments.status = 'captured'
),

daily as (
    select
        event_date,
        market,
        count(*) as transactions,
        sum(amount_usd) as gross_revenue_usd
    from captured
    group by 1, 2
),

final as (
    select
        -- grain
        event_date,
        market,

        -- counts
        transactions,
        0::bigint as refunds,

        -- amounts (USD)
        gross_revenue_usd::decimal(18, 2) as gross_revenue_usd,
        0::decimal(18, 2) as refunds_usd,
        gross_revenue_usd::decimal(18, 2) as revenue_usd,

        -- lineage
        1 as methodology_version,
        {{ refill_string_literal(refill_run_id()) }} as _run_id
    from daily
)

select * from final
