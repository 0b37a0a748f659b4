{#-
    Every landed line of the window, parsed, typed and classified exactly once:
    published (the first copy of a valid payment), duplicate (an identical replay)
    or quarantined (malformed, or one of several conflicting versions of a
    transaction in a day). The rule lives in refill_classify_payment_lines
    (macros/rules/), shared with the benchmark's contenders.
-#}

with raw_lines as (
    select * from {{ ref('stg_payments__raw_lines') }}
),

markets as (
    select * from {{ ref('markets') }}
),

currencies as (
    select distinct currency from {{ ref('fx_rates_daily') }}
),

final as (
    {{ refill_classify_payment_lines('raw_lines', 'markets', 'currencies') }}
)

select * from final
