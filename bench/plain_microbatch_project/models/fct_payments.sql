{#-
    One row per payment and day, the way a team writes it first: read the batch's day
    folders with read_json (ignore_errors: a line that does not parse becomes a row of
    nulls, a value that does not cast becomes null), keep one row per transaction and day
    with row_number(), join the day's fx rate. The day is the folder's dt=, as refill's.
    Nothing is quarantined or counted: what read_json cannot read is gone, and what it
    reads is published, valid or not.
-#}
{{ config(event_time='event_date') }}

{%- set landing = env_var('REFILL_LANDING', 'data/landing') -%}
{%- set batch_days = [] -%}
{%- if model.batch and model.batch.event_time_start -%}
    {%- set first_day = model.batch.event_time_start.date() -%}
    {%- set day_count = (model.batch.event_time_end - model.batch.event_time_start).days -%}
    {%- for offset in range(day_count) -%}
        {%- do batch_days.append((first_day + modules.datetime.timedelta(days=offset)).isoformat()) -%}
    {%- endfor -%}
{%- endif -%}
{#- Without a batch (dbt's parse, a non-batched run) an empty day list reads no folder. -#}
{%- if not batch_days -%}{%- do batch_days.append('1970-01-01') -%}{%- endif %}

with landed as (
    select *
    from read_json(
        [
            {%- for day in batch_days %}
            '{{ landing }}/payments/dt={{ day }}/part-*.jsonl'{{ ',' if not loop.last }}
            {%- endfor %}
        ],
        format = 'newline_delimited',
        ignore_errors = true,
        hive_partitioning = true,
        columns = {
            'transaction_id': 'varchar',
            'event_ts': 'timestamp',
            'amount': 'decimal(18, 2)',
            'currency': 'varchar',
            'market': 'varchar',
            'status': 'varchar'
        }
    )
),

fx_rates as (
    select * from {{ ref('fx_rates_daily') }}
),

deduplicated as (
    select
        *,
        dt::date as event_date
    from landed
    -- a line that did not parse is a row of nulls: the one filter a team adds first
    where transaction_id is not null
    qualify row_number() over (
        partition by dt, transaction_id
        order by event_ts, amount
    ) = 1
),

final as (
    select
        -- ids
        deduplicated.transaction_id,

        -- partition
        deduplicated.event_date,

        -- timestamps (UTC)
        deduplicated.event_ts,

        -- amounts
        deduplicated.amount,
        deduplicated.currency,
        round(deduplicated.amount * fx_rates.usd_per_unit, 2) as amount_usd,

        -- dimensions
        deduplicated.market,
        deduplicated.status
    from deduplicated
    left join fx_rates
        on
            deduplicated.event_date = fx_rates.rate_date
            and deduplicated.currency = fx_rates.currency
)

select * from final
