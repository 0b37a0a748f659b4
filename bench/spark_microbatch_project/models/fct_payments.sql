{#- One row per payment: the day's published lines at the event day's fx rate. -#}
{{ config(event_time='event_date', partition_by=['event_date']) }}

with lines as (
    select * from {{ ref('stg_payments__lines') }}
),

fx_rates as (
    select * from {{ ref('fx_rates_daily') }}
),

final as (
    select
        lines.transaction_id,
        lines.event_ts,
        lines.amount,
        lines.currency,
        round(lines.amount * fx_rates.usd_per_unit, 2) as amount_usd,
        lines.market,
        lines.status,
        lines.landed_date as event_date
    from lines
    left join fx_rates
        on
            lines.landed_date = fx_rates.rate_date
            and lines.currency = fx_rates.currency
    where lines.line_status = 'published'
)

select * from final
