{#- Daily revenue by market at the event day's rate, refunds netted, failed payments out.
    A view: a second microbatch model would cost another batch per day. -#}
{{ config(materialized='view') }}

select
    event_date,
    market,
    count(*) as transactions,
    count(*) filter (where status = 'refunded') as refunds,
    coalesce(sum(amount_usd) filter (where status = 'captured'), 0) as gross_revenue_usd,
    coalesce(sum(amount_usd) filter (where status = 'refunded'), 0) as refunds_usd,
    coalesce(sum(amount_usd) filter (where status = 'captured'), 0)
    - coalesce(sum(amount_usd) filter (where status = 'refunded'), 0) as revenue_usd
from {{ ref('fct_payments') }}
where status in ('captured', 'refunded')
group by 1, 2
