{% macro spark__refill_classify_payment_lines(raw_lines, markets, currencies) %}
    {#
        The classification of landed payment lines in Spark SQL: the counterpart of
        default__refill_classify_payment_lines (same columns, same statuses and reasons;
        keep the two in step; tests/spark/ checks both give the same per-day counts, amounts
        and quarantine on one landing). The spellings that differ (docs/spark.md, section 4):
        JSON through Spark 4's VARIANT (one parse per line, then path lookups; a field's kind
        from schema_of_variant: STRING, BIGINT, DOUBLE, DECIMAL(p,s), VOID for a JSON null,
        NULL when missing), xxhash64 for DuckDB's 64-bit hash, regular expressions as raw
        literals, and the UTC day from unix seconds, so the session's time zone never
        decides a day (an event_ts without a zone is UTC: a Z is appended before the cast).
    #}
    with parsed as (
        select
            landed_date,
            file_name,
            line_number,
            line_text,
            is_valid_utf8,
            try_parse_json(line_text) as line_json
        from {{ raw_lines }}
    ),

    typed as (
        select
            landed_date,
            file_name,
            line_number,
            line_text,
            is_valid_utf8,
            line_json is not null as is_json,
            startswith(trim(leading concat(chr(32), chr(9), chr(13)) from line_text), '{') as is_object,

            -- JSON kinds, to tell a missing field (NULL or VOID) from a wrong type
            schema_of_variant(try_variant_get(line_json, '$.transaction_id', 'variant')) as transaction_id_kind,
            schema_of_variant(try_variant_get(line_json, '$.event_ts', 'variant')) as event_ts_kind,
            schema_of_variant(try_variant_get(line_json, '$.amount', 'variant')) as amount_kind,
            schema_of_variant(try_variant_get(line_json, '$.currency', 'variant')) as currency_kind,
            schema_of_variant(try_variant_get(line_json, '$.market', 'variant')) as market_kind,
            schema_of_variant(try_variant_get(line_json, '$.status', 'variant')) as status_kind,

            -- ids
            try_variant_get(line_json, '$.transaction_id', 'string') as transaction_id,

            -- timestamps (UTC)
            try_variant_get(line_json, '$.event_ts', 'string') as event_ts_text,

            -- amounts (major units), through their text as DuckDB's rule does
            try_cast(try_variant_get(line_json, '$.amount', 'string') as decimal(18, 2)) as amount,

            -- dimensions
            try_variant_get(line_json, '$.currency', 'string') as currency,
            try_variant_get(line_json, '$.market', 'string') as market,
            try_variant_get(line_json, '$.status', 'string') as status
        from parsed
    ),

    timed as (
        select
            typed.*,
            case
                -- the common case, an explicit Z: nothing for the session zone to decide
                when endswith(event_ts_text, 'Z') then try_cast(event_ts_text as timestamp)
                -- no zone: UTC said explicitly; with a zone or offset, the added Z does not parse
                else coalesce(
                    try_cast(concat(trim(trailing concat(chr(32), chr(9), chr(13)) from event_ts_text), 'Z') as timestamp),
                    try_cast(event_ts_text as timestamp)
                )
            end as event_ts
        from typed
    ),

    validated as (
        select
            timed.*,
            case
                when not is_valid_utf8 then 'not valid UTF-8'
                when not is_json then 'not valid JSON'
                when not is_object then 'not a JSON object'
                when coalesce(transaction_id_kind, 'VOID') = 'VOID' then 'transaction_id missing'
                when transaction_id_kind <> 'STRING' or transaction_id = ''
                    then 'transaction_id is not a non-empty string'
                when coalesce(event_ts_kind, 'VOID') = 'VOID' then 'event_ts missing'
                when
                    event_ts_kind <> 'STRING'
                    or not event_ts_text rlike r'^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}'
                    or event_ts is null
                    then 'event_ts is not an ISO-8601 timestamp'
                when date_from_unix_date(cast(floor(unix_seconds(event_ts) / 86400) as int)) <> landed_date
                    then 'event_ts ' || event_ts_text || ' is not on the partition day'
                when coalesce(amount_kind, 'VOID') = 'VOID' then 'amount missing'
                when not amount_kind rlike r'^(BIGINT|INT|SMALLINT|TINYINT|DOUBLE|FLOAT|DECIMAL)' or amount is null
                    then 'amount is not a number'
                when coalesce(currency_kind, 'VOID') = 'VOID' then 'currency missing'
                when currency not in (select known.currency from {{ currencies }} as known)
                    then 'unknown currency ' || currency
                when coalesce(market_kind, 'VOID') = 'VOID' then 'market missing'
                when market not in (select known.market from {{ markets }} as known)
                    then 'unknown market ' || market
                when coalesce(status_kind, 'VOID') = 'VOID' then 'status missing'
                when status not in ('captured', 'refunded', 'failed')
                    then 'unknown status ' || status
            end as malformed_reason
        from timed
    ),

    repeated_transactions as (
        -- valid transactions landed more than once in their day: replays or conflicts
        select
            landed_date,
            transaction_id
        from validated
        where malformed_reason is null
        group by landed_date, transaction_id
        having count(*) > 1
    ),

    valid_versions as (
        -- per repeated transaction and day: whether its copies differ, and which is first
        select
            validated.landed_date,
            validated.transaction_id,
            min(xxhash64(event_ts, amount, currency, market, status))
            <> max(xxhash64(event_ts, amount, currency, market, status)) as is_conflicting,
            min(struct(file_name, line_number)) as first_copy
        from validated
        left semi join repeated_transactions
            on
                validated.landed_date = repeated_transactions.landed_date
                and validated.transaction_id = repeated_transactions.transaction_id
        where validated.malformed_reason is null
        group by validated.landed_date, validated.transaction_id
    ),

    classified as (
        select
            validated.*,
            coalesce(valid_versions.is_conflicting, false) as is_conflicting,
            case
                when validated.malformed_reason is not null or valid_versions.is_conflicting
                    then 'quarantined'
                -- a transaction landed once has no versions to compare: its one copy
                when valid_versions.first_copy is null
                    or struct(validated.file_name, validated.line_number) = valid_versions.first_copy
                    then 'published'
                else 'duplicate'
            end as line_status
        from validated
        -- malformed lines join nothing: they never make a valid line conflict
        left join valid_versions
            on
                validated.malformed_reason is null
                and validated.landed_date = valid_versions.landed_date
                and validated.transaction_id = valid_versions.transaction_id
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
