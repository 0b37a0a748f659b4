{% macro spark__refill_classify_payment_lines(raw_lines, markets, currencies) %}
    {#
        The classification of landed payment lines in Spark SQL: Spark's parsing and typing
        of each line, then the one rule both engines share (refill_classify_typed_payment_lines,
        in refill_classify_payment_lines.sql: the same reasons, statuses and columns;
        tests/spark/ checks both give the same per-day counts, amounts and quarantine on one
        landing). The spellings that differ (docs/spark.md, section 4):
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

    {{ refill_classify_typed_payment_lines('timed', markets, currencies, spark=true) }}
{% endmacro %}
