{#-
    One row per payment, partitioned by event_date. Each run replaces exactly the
    window's days in one transaction, then audits them before commit: keys unique
    in the window, every day reconciled with its landed lines, every landed line
    accounted for. Any failure rolls everything back, ledger row included.
-#}
{{
    config(
        partition_column='event_date',
        post_hook=[
            "{{ refill_audit_unique_in_window('transaction_id') }}",
            "{{ refill_audit_reconciles(
                source_model='stg_payments__lines',
                source_partition_column='landed_date',
                source_where=\"line_status = 'published'\",
                measures={'transactions': 'count(*)', 'amount': 'sum(amount)'}) }}",
            "{{ refill_audit_line_accounting() }}",
            "{{ refill_record_partitions() }}",
        ],
    )
}}
-- depends_on: {{ ref('stg_payments__manifests') }}

with lines as (
    select * from {{ ref('stg_payments__lines') }}
),

fx_rates as (
    select * from {{ ref('fx_rates_daily') }}
),

published_lines as (
    select *
    from lines
    where
        line_status = 'published'
        and {{ refill_window_predicate('landed_date') }}
),

converted as (
    select
        published_lines.*,
        -- the event day's rate: a payment is worth what it was worth that day
        round(published_lines.amount * fx_rates.usd_per_unit, 2) as amount_usd
    from published_lines
    left join fx_rates
        on
            published_lines.landed_date = fx_rates.rate_date
            and published_lines.currency = fx_rates.currency
),

final as (
    select
        -- ids
        transaction_id,

        -- partition
        {{ refill_event_date('landed_date') }} as event_date,

        -- timestamps (UTC)
        event_ts,

        -- amounts
        amount,
        currency,
        amount_usd,

        -- dimensions
        market,
        status,

        -- lineage
        '{{ refill_run_id() }}' as _run_id
    from converted
)

select * from final
