{#-
    Every landed line of one day (one microbatch batch), parsed, typed and classified:
    published, duplicate or quarantined with a reason. The same SQL as refill's
    stg_payments__lines and stg_payments__raw_lines; the batch's day picks the folder.
-#}
{{ config(event_time='landed_date') }}

{%- set landing = env_var('REFILL_LANDING', 'data/landing') -%}
{%- if model.batch and model.batch.event_time_start -%}
    {%- set day = model.batch.event_time_start.strftime('%Y-%m-%d') -%}
{%- else -%}
    {%- set day = '1970-01-01' -%}
{%- endif %}

with files as (
    select
        filename,
        string_split(content, chr(10)) as pieces
    from read_text('{{ landing }}/payments/dt={{ day }}/part-*.jsonl')
),

numbered as (
    select
        filename,
        len(pieces) as piece_count,
        generate_subscripts(pieces, 1) as line_number,
        unnest(pieces) as line_text
    from files
),

raw_lines as (
    select
        substr(filename, {{ landing | length + 2 }}) as file_name,
        date '{{ day }}' as landed_date,
        line_number,
        rtrim(line_text, chr(13)) as line_text
    from numbered
    where not (line_number = piece_count and line_text = '')
),

markets as (
    select * from {{ ref('markets') }}
),

currencies as (
    select distinct currency from {{ ref('fx_rates_daily') }}
),

parsed as (
    select
        *,
        try_cast(line_text as json) as line_json
    from raw_lines
),

typed as (
    select
        parsed.*,
        json_type(line_json) as line_kind,
        json_type(line_json, '$.transaction_id') as transaction_id_kind,
        json_type(line_json, '$.event_ts') as event_ts_kind,
        json_type(line_json, '$.amount') as amount_kind,
        json_type(line_json, '$.currency') as currency_kind,
        json_type(line_json, '$.market') as market_kind,
        json_type(line_json, '$.status') as status_kind,
        line_json ->> '$.transaction_id' as transaction_id,
        line_json ->> '$.event_ts' as event_ts_text,
        timezone('UTC', try_cast(line_json ->> '$.event_ts' as timestamptz)) as event_ts,
        coalesce(
            json_type(line_json, '$.event_ts') = 'VARCHAR'
            and regexp_matches(line_json ->> '$.event_ts', '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}'),
            false
        ) as is_iso_timestamp,
        try_cast(line_json ->> '$.amount' as decimal(18, 2)) as amount,
        line_json ->> '$.currency' as currency,
        line_json ->> '$.market' as market,
        line_json ->> '$.status' as status
    from parsed
),

validated as (
    select
        typed.*,
        case
            when line_json is null then 'not valid JSON'
            when line_kind <> 'OBJECT' then 'not a JSON object'
            when coalesce(transaction_id_kind, 'NULL') = 'NULL' then 'transaction_id missing'
            when transaction_id_kind <> 'VARCHAR' or transaction_id = ''
                then 'transaction_id is not a non-empty string'
            when coalesce(event_ts_kind, 'NULL') = 'NULL' then 'event_ts missing'
            when not is_iso_timestamp or event_ts is null then 'event_ts is not an ISO-8601 timestamp'
            when event_ts::date <> landed_date
                then 'event_ts ' || event_ts_text || ' is not on the partition day'
            when coalesce(amount_kind, 'NULL') = 'NULL' then 'amount missing'
            when amount_kind not in ('UBIGINT', 'BIGINT', 'DOUBLE', 'HUGEINT') or amount is null
                then 'amount is not a number'
            when coalesce(currency_kind, 'NULL') = 'NULL' then 'currency missing'
            when currency not in (select currencies.currency from currencies)
                then 'unknown currency ' || currency
            when coalesce(market_kind, 'NULL') = 'NULL' then 'market missing'
            when market not in (select markets.market from markets)
                then 'unknown market ' || market
            when coalesce(status_kind, 'NULL') = 'NULL' then 'status missing'
            when status not in ('captured', 'refunded', 'failed')
                then 'unknown status ' || status
        end as malformed_reason
    from typed
),

compared as (
    select
        validated.*,
        min(md5(concat_ws('|', event_ts, amount, currency, market, status))) over same_transaction
        <> max(md5(concat_ws('|', event_ts, amount, currency, market, status)))
        over same_transaction as is_conflicting,
        row_number() over (same_transaction order by file_name, line_number) as copy_number
    from validated
    window same_transaction as (
        partition by landed_date, transaction_id, malformed_reason is null
    )
),

final as (
    select
        landed_date,
        file_name,
        line_number,
        transaction_id,
        event_ts,
        amount,
        currency,
        market,
        status,
        case
            when malformed_reason is not null or is_conflicting then 'quarantined'
            when copy_number = 1 then 'published'
            else 'duplicate'
        end as line_status,
        case
            when malformed_reason is not null then malformed_reason
            when is_conflicting then 'conflicting versions of transaction ' || transaction_id
        end as quarantine_reason,
        line_text
    from compared
)

select * from final
