{% macro refill_classify_payment_lines(raw_lines, markets, currencies) -%}
    {#- In dbt, the engine's spelling (spark__: refill_classify_payment_lines__spark.sql);
        rendered with plain Jinja (bench/floor.py, no dbt context), DuckDB's. -#}
    {%- if adapter is defined -%}
        {{ adapter.dispatch('refill_classify_payment_lines', 'refill')(raw_lines, markets, currencies) }}
    {%- else -%}
        {{ default__refill_classify_payment_lines(raw_lines, markets, currencies) }}
    {%- endif -%}
{%- endmacro %}

{% macro default__refill_classify_payment_lines(raw_lines, markets, currencies) %}
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
        - two passes over each parsed line, each taking the six fields at once: their
          JSON kinds (json_type) and their values as text (json_extract_string); taking
          each field's kind and text from its extracted JSON parses it twice more;
        - a line's JSON kind from its first character (valid JSON only): an object is
          the only kind that starts with `{`, and skips one more parse (ltrim only for a
          line that does not start with it: trimming a character set is dear);
        - replays and conflicts from aggregates, not window functions: most transactions
          land once, so one grouped count finds the few landed more than once, and only
          those are compared (min and max of DuckDB's hash() of the typed values: identical
          replays share it, conflicting versions do not) and give their first copy by
          (file, line); a window over every line sorted the whole chunk;
        - the line's text is kept for quarantined lines only, the ones someone reads;
          keeping every line's text doubled the size of the staging work table. The text
          is carried through the parse and checks, not read again from the files at the
          end: a second read of the lines (joined back by file and line) spilled a 46-day
          chunk of the benchmark's standard data past the default memory budget, and a
          second read is a second chance for the bytes to differ from those checked.
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
            json_type(
                line_json,
                ['$.transaction_id', '$.event_ts', '$.amount', '$.currency', '$.market', '$.status']
            ) as field_kinds,
            json_extract_string(
                line_json,
                ['$.transaction_id', '$.event_ts', '$.amount', '$.currency', '$.market', '$.status']
            ) as field_texts
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
            case
                when starts_with(line_text, '{') then true
                else starts_with(ltrim(line_text, chr(32) || chr(9) || chr(13)), '{')
            end as is_object,

            -- JSON kinds, to tell a missing field (NULL) from a wrong type
            field_kinds[1] as transaction_id_kind,
            field_kinds[2] as event_ts_kind,
            field_kinds[3] as amount_kind,
            field_kinds[4] as currency_kind,
            field_kinds[5] as market_kind,
            field_kinds[6] as status_kind,

            -- ids
            field_texts[1] as transaction_id,

            -- timestamps (UTC)
            field_texts[2] as event_ts_text,
            timezone('UTC', case
                -- the common case, an explicit Z: nothing for the session zone to decide
                when ends_with(field_texts[2], 'Z') then try_cast(field_texts[2] as timestamptz)
                -- no zone: UTC said explicitly; with a zone or offset, the added Z does not parse
                else coalesce(
                    try_cast(rtrim(field_texts[2], chr(32) || chr(9) || chr(13)) || 'Z' as timestamptz),
                    try_cast(field_texts[2] as timestamptz)
                )
            end) as event_ts,

            -- amounts (major units)
            try_cast(field_texts[3] as decimal(18, 2)) as amount,

            -- dimensions
            field_texts[4] as currency,
            field_texts[5] as market,
            field_texts[6] as status
        from extracted
    ),

    {{ refill_classify_typed_payment_lines('typed', markets, currencies) }}
{% endmacro %}

{% macro refill_classify_typed_payment_lines(typed, markets, currencies, spark=false) %}
    {#
        The rule itself, shared by both engines' spellings of parsing (DuckDB's above,
        Spark's in refill_classify_payment_lines__spark.sql): from `typed`, a CTE of parsed
        lines (landed_date, file_name, line_number, line_text, is_valid_utf8, is_json,
        is_object, the six fields' JSON kinds as the engine names them, their text, event_ts
        and amount typed), the CTEs that validate, find replays and conflicts, and classify,
        then the final select. Renders the rest of a WITH: the caller writes `with ...,
        typed as (...),` before it. `spark` picks Spark SQL's spelling where it differs
        (docs/spark.md, section 4): a JSON null or missing field is VOID or NULL (DuckDB:
        'NULL'), text is STRING (VARCHAR), regular expressions are raw literals with rlike,
        the UTC day comes from unix seconds (the session's zone never decides a day),
        xxhash64 is DuckDB's 64-bit hash, a struct its row value.
    #}
    {%- set absent = "'VOID'" if spark else "'NULL'" -%}
    {%- set text = "'STRING'" if spark else "'VARCHAR'" -%}
    {%- set hash = 'xxhash64' if spark else 'hash' -%}
    {%- set row = 'struct' if spark else '' %}
    validated as (
        select
            {{ typed }}.*,
            case
                when not is_valid_utf8 then 'not valid UTF-8'
                when not is_json then 'not valid JSON'
                when not is_object then 'not a JSON object'
                when coalesce(transaction_id_kind, {{ absent }}) = {{ absent }} then 'transaction_id missing'
                when transaction_id_kind <> {{ text }} or transaction_id = ''
                    then 'transaction_id is not a non-empty string'
                when coalesce(event_ts_kind, {{ absent }}) = {{ absent }} then 'event_ts missing'
                when
                    event_ts_kind <> {{ text }}
                    {% if spark %}
                    or not event_ts_text rlike r'^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}'
                    {% else %}
                    or not regexp_matches(event_ts_text, '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}')
                    {% endif %}
                    or event_ts is null
                    then 'event_ts is not an ISO-8601 timestamp'
                {% if spark %}
                when date_from_unix_date(cast(floor(unix_seconds(event_ts) / 86400) as int)) <> landed_date
                {% else %}
                when event_ts::date <> landed_date
                {% endif %}
                    then 'event_ts ' || event_ts_text || ' is not on the partition day'
                when coalesce(amount_kind, {{ absent }}) = {{ absent }} then 'amount missing'
                {% if spark %}
                when not amount_kind rlike r'^(BIGINT|INT|SMALLINT|TINYINT|DOUBLE|FLOAT|DECIMAL)' or amount is null
                {% else %}
                when amount_kind not in ('UBIGINT', 'BIGINT', 'DOUBLE', 'HUGEINT') or amount is null
                {% endif %}
                    then 'amount is not a number'
                when coalesce(currency_kind, {{ absent }}) = {{ absent }} then 'currency missing'
                when currency not in (select known.currency from {{ currencies }} as known)
                    then 'unknown currency ' || currency
                when coalesce(market_kind, {{ absent }}) = {{ absent }} then 'market missing'
                when market not in (select known.market from {{ markets }} as known)
                    then 'unknown market ' || market
                when coalesce(status_kind, {{ absent }}) = {{ absent }} then 'status missing'
                when status not in ('captured', 'refunded', 'failed')
                    then 'unknown status ' || status
            end as malformed_reason
        from {{ typed }}
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
            min({{ hash }}(event_ts, amount, currency, market, status))
            <> max({{ hash }}(event_ts, amount, currency, market, status)) as is_conflicting,
            min({{ row }}(file_name, line_number)) as first_copy
        from validated
        semi join repeated_transactions
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
                    or {{ row }}(validated.file_name, validated.line_number) = valid_versions.first_copy
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
