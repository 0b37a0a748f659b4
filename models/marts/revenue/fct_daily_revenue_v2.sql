{#-
    Daily revenue by market, v2: the new method. Converts at the event day's rate
    (fct_payments.amount_usd, the one home of that conversion), nets refunds and
    leaves failed payments out. Replaced per window like v1, with the same audits;
    building it never touches v1 or the version pointer.
-#}
{{
    config(
        partition_column='event_date',
        post_hook=[
            "{{ refill_audit_version_reconciles(
                expected_sql=fct_daily_revenue_expected_sql(2, refill_chunk_relation(ref('fct_payments'))),
                upstream_model='fct_payments') }}",
            "{{ refill_record_partitions(upstream_model='fct_payments') }}",
            "{{ refill_on_publish(refill_expected_view_sql(fct_daily_revenue_expected_sql(2))) }}",
        ],
    )
}}

with payments as (
    -- this chunk's facts when the same command builds them, else the published ones
    select * from {{ refill_chunk_relation(ref('fct_payments')) }}
),

counted as (
    select
        event_date,
        market,
        status,
        amount_usd
    from payments
    where
        {{ refill_window_predicate('event_date') }}
        -- a failed payment moved no money
        and status in ('captured', 'refunded')
),

daily as (
    select
        event_date,
        market,
        count(*) as transactions,
        count(*) filter (where status = 'refunded') as refunds,
        coalesce(sum(amount_usd) filter (where status = 'captured'), 0) as gross_revenue_usd,
        coalesce(sum(amount_usd) filter (where status = 'refunded'), 0) as refunds_usd
    from counted
    group by 1, 2
),

final as (
    select
        -- grain
        event_date,
        market,

        -- counts
        transactions,
        refunds,

        -- amounts (USD)
        gross_revenue_usd::decimal(18, 2) as gross_revenue_usd,
        refunds_usd::decimal(18, 2) as refunds_usd,
        -- refunds are money returned: netted from the day they happen
        (gross_revenue_usd - refunds_usd)::decimal(18, 2) as revenue_usd,

        -- lineage
        2 as methodology_version,
        {{ refill_string_literal(refill_run_id()) }} as _run_id
    from daily
)

select * from final
