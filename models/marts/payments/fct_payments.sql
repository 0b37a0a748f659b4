{#-
    One row per payment event and day (transaction_id, event_date), partitioned by
    event_date: a transaction captured one day and refunded the next is two rows, so
    any chunking of the days gives the same table. A build writes the window's rows to
    the model's shadow and audits them there: keys unique in the window on the grain,
    every day reconciled with its landed lines, every landed line accounted for, every
    row converted to USD. refill_publish (on-run-end) then publishes the chunk with the
    other models of the invocation and their ledger rows, in one transaction, or none.
-#}
{{
    config(
        partition_column='event_date',
        post_hook=[
            "{{ refill_audit_unique_in_window(['transaction_id', 'event_date']) }}",
            "{{ refill_audit_reconciles(
                source_model='stg_payments__lines',
                source_partition_column='landed_date',
                source_where=\"line_status = 'published'\",
                measures={'transactions': 'count(*)', 'amount': 'sum(amount)'}) }}",
            "{{ refill_audit_line_accounting() }}",
            "{{ refill_audit_converted('amount_usd', 'event_date', 'currency') }}",
            "{{ refill_record_partitions() }}",
        ],
    )
}}
-- depends_on: {{ refill_lineage_ref('stg_payments__manifests') }}

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
        {{ refill_string_literal(refill_run_id()) }} as _run_id
    from converted
)

select * from final
