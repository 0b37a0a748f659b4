{% macro refill_classify_payment_lines(raw_lines, markets, currencies) %}
    {#
        The classification of landed payment lines: its one home. A query over
        `raw_lines` (landed_date, file_name, line_number, line_text, is_valid_utf8) that
        parses, types and classifies every line exactly once:
          published    the first copy (by file, line) of a valid payment in its day
          duplicate    a later, identical copy of it (an at-least-once replay)
          quarantined  malformed (with the first reason found), or one of several
                       conflicting versions of a transaction in a day
        `markets` and `currencies` name relations with a `market` / `currency` column.

        Plain SQL and plain Jinja (no ref, no adapter): stg_payments__lines calls it, and
        so do the benchmark's microbatch project and floor script (bench/), so every
        contender measures the same statement by construction.

        Dedup is per landed day, so a day's result never depends on which other days
        share its window. Why it is written this way (measured in docs/performance.md):
        - one JSON parse per line: the six fields are extracted together and typed from
          the extracted values; a path lookup on the whole line parses it again each time;
        - a line's JSON kind from its first character (valid JSON only): an object is
          the only kind that starts with `{`, and skips one more parse;
        - the content hash is DuckDB's hash(), compared within a transaction and day
          only (never stored): identical replays share it, conflicting versions do not;
        - the line's text is kept for quarantined lines only, the ones someone reads;
          keeping every line's text doubled the size of the staging work table.
        What a value means never depends on the session: an event_ts without a zone is
        UTC (the landing contract) and is given one before the cast, so the engine's
        time zone (the host's, unless the profile pins it) cannot move it to another day.
    #}
    with parsed as (
        select
            landed_date,
            file_name,
            line_number,
            line_text,
            is_valid_utf8,
            try_cast(line_text as json) as line_json
        from {{ raw_lines }}
    ),

    extracted as (
        select
            parsed.*,
            json_extract(
                line_json,
                ['$.transaction_id', '$.event_ts', '$.amount', '$.currency', '$.market', '$.status']
            ) as fields
        from parsed
    ),

    typed as (
        select
            landed_date,
            file_name,
            line_number,
            line_text,
            is_valid_utf8,
            line_json is not null as is_json,
            starts_with(ltrim(line_text, chr(32) || chr(9) || chr(13)), '{') as is_object,

            -- JSON kinds, to tell a missing field (NULL) from a wrong type
            json_type(fields[1]) as transaction_id_kind,
            json_type(fields[2]) as event_ts_kind,
            json_type(fields[3]) as amount_kind,
            json_type(fields[4]) as currency_kind,
            json_type(fields[5]) as market_kind,
            json_type(fields[6]) as status_kind,

            -- ids
            fields[1] ->> '$' as transaction_id,

            -- timestamps (UTC)
            fields[2] ->> '$' as event_ts_text,
            timezone('UTC', case
                -- the common case, an explicit Z: nothing for the session zone to decide
                when ends_with(fields[2] ->> '$', 'Z') then try_cast(fields[2] ->> '$' as timestamptz)
                -- no zone: UTC said explicitly; with a zone or offset, the added Z does not parse
                else coalesce(
                    try_cast(rtrim(fields[2] ->> '$', chr(32) || chr(9) || chr(13)) || 'Z' as timestamptz),
                    try_cast(fields[2] ->> '$' as timestamptz)
                )
            end) as event_ts,

            -- amounts (major units)
            try_cast(fields[3] ->> '$' as decimal(18, 2)) as amount,

            -- dimensions
            fields[4] ->> '$' as currency,
            fields[5] ->> '$' as market,
            fields[6] ->> '$' as status
        from extracted
    ),

    validated as (
        select
            typed.*,
            case
                when not is_valid_utf8 then 'not valid UTF-8'
                when not is_json then 'not valid JSON'
                when not is_object then 'not a JSON object'
                when coalesce(transaction_id_kind, 'NULL') = 'NULL' then 'transaction_id missing'
                when transaction_id_kind <> 'VARCHAR' or transaction_id = ''
                    then 'transaction_id is not a non-empty string'
                when coalesce(event_ts_kind, 'NULL') = 'NULL' then 'event_ts missing'
                when
                    event_ts_kind <> 'VARCHAR'
                    or not regexp_matches(event_ts_text, '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}')
                    or event_ts is null
                    then 'event_ts is not an ISO-8601 timestamp'
                when event_ts::date <> landed_date
                    then 'event_ts ' || event_ts_text || ' is not on the partition day'
                when coalesce(amount_kind, 'NULL') = 'NULL' then 'amount missing'
                when amount_kind not in ('UBIGINT', 'BIGINT', 'DOUBLE', 'HUGEINT') or amount is null
                    then 'amount is not a number'
                when coalesce(currency_kind, 'NULL') = 'NULL' then 'currency missing'
                when currency not in (select known.currency from {{ currencies }} as known)
                    then 'unknown currency ' || currency
                when coalesce(market_kind, 'NULL') = 'NULL' then 'market missing'
                when market not in (select known.market from {{ markets }} as known)
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
            -- malformed lines sit in partitions of their own: they never make a valid line conflict
            min(hash(event_ts, amount, currency, market, status)) over same_transaction
            <> max(hash(event_ts, amount, currency, market, status)) over same_transaction
                as is_conflicting,
            row_number() over (same_transaction order by file_name, line_number) as copy_number
        from validated
        window same_transaction as (
            partition by landed_date, transaction_id, malformed_reason is null
        )
    ),

    classified as (
        select
            *,
            case
                when malformed_reason is not null or is_conflicting then 'quarantined'
                when copy_number = 1 then 'published'
                else 'duplicate'
            end as line_status
        from compared
    )

    select
        -- partition
        landed_date,

        -- where the line came from
        file_name,
        line_number,

        -- ids
        transaction_id,

        -- timestamps
        event_ts,

        -- amounts
        amount,

        -- dimensions
        currency,
        market,
        status,

        -- classification
        line_status,
        case
            when malformed_reason is not null then malformed_reason
            when is_conflicting then 'conflicting versions of transaction ' || transaction_id
        end as quarantine_reason,

        -- the line as landed, for the lines someone will read
        case when line_status = 'quarantined' then line_text end as line_text
    from classified
{% endmacro %}
