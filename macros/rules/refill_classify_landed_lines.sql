{% macro refill_classify_landed_lines(raw_lines, rule) -%}
    {#- In dbt, the engine's spelling (default__ is DuckDB's, spark__ Spark's); rendered with
        plain Jinja (bench/floor.py, no dbt context), DuckDB's. -#}
    {%- if adapter is defined -%}
        {{ adapter.dispatch('refill_classify_landed_lines', 'refill')(raw_lines, rule) }}
    {%- else -%}
        {{ default__refill_classify_landed_lines(raw_lines, rule) }}
    {%- endif -%}
{%- endmacro %}

{% macro default__refill_classify_landed_lines(raw_lines, rule) %}
    {#
        The classification of a dataset's landed lines: its one home, derived from the
        dataset's declaration (`rule`: refill_lines_rule reads and checks it, docs/reference/landing.md
        says what it holds). A query over `raw_lines` (landed_date, file_name,
        line_number, line_text, is_valid_utf8) that parses, types and classifies every
        line exactly once:
          published    the first copy (by file, line) of a valid record of its key in its day
          duplicate    a later, identical copy of it (an at-least-once replay)
          quarantined  malformed (with the first reason found, fields in declared order), or
                       one of several conflicting versions of a key in a day

        Plain SQL and plain Jinja (no ref, no adapter, no `do`): the staging model of each
        dataset calls it, and so do the benchmark's microbatch project and floor script
        (bench/), so every contender measures the same statement by construction.

        Dedup is per landed day, so a day's result never depends on which other days
        share its window. Why it is written this way (measured in docs/performance.md):
        - one parse per line, then every declared field taken at once: their JSON kinds
          (json_type) and their values as text (json_extract_string); taking each field's
          kind and text from its extracted JSON parses it twice more;
        - a line's JSON kind from its first character (valid JSON only): an object is
          the only kind that starts with `{`, and skips one more parse (ltrim only for a
          line that does not start with it: trimming a character set is dear);
        - replays and conflicts from aggregates, not window functions: most keys land
          once, so one grouped count finds the few landed more than once, and only those
          are compared (min and max of DuckDB's hash() of the typed values: identical
          replays share it, conflicting versions do not) and give their first copy by
          (file, line); a window over every line sorted the whole chunk;
        - the line's text is kept for quarantined lines only, the ones someone reads, and
          carried through the parse and checks rather than read again from the files (a
          second read spilled a 46-day chunk past the default memory budget, and is a
          second chance for the bytes to differ from those checked).
        What a value means never depends on the session: a timestamp without a zone is in
        the day's declared zone (UTC unless declared) and is given it before the cast, and
        a day is taken in that zone, so the engine's time zone cannot move a line to
        another day.
    #}
    {%- set fields = rule.fields -%}
    {%- set paths = [] -%}
    {%- for field in fields -%}
        {%- set _ = paths.append("'$." ~ field.get('json_key', field.name) ~ "'") -%}
    {%- endfor %}
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
            json_type(line_json, [{{ paths | join(', ') }}]) as field_kinds,
            json_extract_string(line_json, [{{ paths | join(', ') }}]) as field_texts
        from parsed
    ),

    texts as (
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
            {%- for field in fields %}
            -- {{ field.name }}: its JSON kind (to tell a missing field from a wrong type) and text
            field_kinds[{{ loop.index }}] as {{ field.name }}__kind,
            field_texts[{{ loop.index }}] as {{ field.name }}__text{{ ',' if not loop.last }}
            {%- endfor %}
        from extracted
    ),

    typed as (
        select
            {{ refill_typed_line_columns(rule) }}
        from texts
    ),

    {{ refill_classify_typed_lines('typed', rule) }}
{% endmacro %}

{% macro refill_typed_line_columns(rule, spark=false) -%}
    {#- The typed CTE's columns: the line's, each field's JSON kind and typed value, and its
        text only where the checks read it after typing (a date's or timestamp's form and a
        reason quoting it; a string's text is its value). The checks' CTE is read three
        times, so the engine may keep it whole: a text column too many is a copy of every
        line's field carried through a chunk. -#}
            landed_date,
            file_name,
            line_number,
            line_text,
            is_valid_utf8,
            is_json,
            is_object,
    {%- for field in rule.fields %}
            {{ field.name }}__kind,
            {%- set accepted_in = field.accepted_in is defined and field.accepted_in is not none %}
            {%- if field.type in ('date', 'timestamp') or (field.type != 'string' and accepted_in) %}
            {{ field.name }}__text,
            {%- endif %}
            {{ refill_landed_value(field, field.name ~ '__text', rule, spark=spark) }} as {{ field.name }}
            {{- ',' if not loop.last }}
    {%- endfor %}
{%- endmacro %}

{% macro refill_landed_value(field, text, rule, spark=false) -%}
    {#- A declared field's typed value from its text (null when it does not convert: the
        checks then name the field). Timestamps come out as UTC without a zone; one landed
        without a zone is in the day's declared zone (UTC by default), said explicitly
        before the cast, so the session's zone never reinterprets it. -#}
    {%- set kind = field.type -%}
    {%- set zone = (rule.day or {}).get('time_zone', 'UTC') -%}
    {%- set blank = 'chr(32) || chr(9) || chr(13)' if not spark else 'concat(chr(32), chr(9), chr(13))' -%}
    {%- if kind == 'string' -%}
        {{ text }}
    {%- elif kind == 'timestamp' and spark -%}
        case
            -- the common case, an explicit Z: nothing for the session zone to decide
            when endswith({{ text }}, 'Z') then try_cast({{ text }} as timestamp)
            -- no zone: UTC said explicitly; with a zone or offset, the added Z does not parse
            else coalesce(
                try_cast(concat(trim(trailing {{ blank }} from {{ text }}), 'Z') as timestamp),
                try_cast({{ text }} as timestamp)
            )
        end
    {%- elif kind == 'timestamp' -%}
        timezone('UTC', case
            -- the common case, an explicit Z: nothing for the session zone to decide
            when ends_with({{ text }}, 'Z') then try_cast({{ text }} as timestamptz)
            -- no zone: the declared zone said explicitly; with a zone or offset, the added Z does not parse
            else coalesce(
                {%- if zone == 'UTC' %}
                try_cast(rtrim({{ text }}, {{ blank }}) || 'Z' as timestamptz),
                {%- else %}
                timezone('{{ zone }}', timezone('UTC', try_cast(rtrim({{ text }}, {{ blank }}) || 'Z' as timestamptz))),
                {%- endif %}
                try_cast({{ text }} as timestamptz)
            )
        end)
    {%- elif kind == 'integer' -%}
        try_cast({{ text }} as bigint)
    {%- elif kind == 'float' -%}
        try_cast({{ text }} as double)
    {%- else -%}
        {#- date, boolean and decimal(p, s) are the engine's own type names -#}
        try_cast({{ text }} as {{ kind }})
    {%- endif -%}
{%- endmacro %}

{% macro refill_classify_typed_lines(typed, rule, spark=false) %}
    {#
        The rule itself, shared by both engines' spellings of parsing (DuckDB's and
        Spark's above and below): from `typed`, a CTE of parsed lines (landed_date,
        file_name, line_number, line_text, is_valid_utf8, is_json, is_object, and per
        declared field <name>__kind as the engine names JSON kinds, <name>__text and
        <name> typed), the CTEs that validate, find replays and conflicts, and classify,
        then the final select. Renders the rest of a WITH: the caller writes `with ...,
        typed as (...),` before it. `spark` picks Spark SQL's spelling where it differs
        (docs/spark.md, section 4): a JSON null or missing field is VOID or NULL (DuckDB:
        'NULL'), text is STRING (VARCHAR), regular expressions are raw literals with rlike,
        the UTC day comes from unix seconds (the session's zone never decides a day),
        xxhash64 is DuckDB's 64-bit hash, a struct its row value.
    #}
    {%- set absent = "'VOID'" if spark else "'NULL'" -%}
    {%- set text_kind = "'STRING'" if spark else "'VARCHAR'" -%}
    {%- set hash = 'xxhash64' if spark else 'hash' -%}
    {%- set row = 'struct' if spark else '' -%}
    {%- set day = rule.day or {} -%}
    {%- set zone = day.get('time_zone', 'UTC') -%}
    {%- set key = rule.key -%}
    {%- set compared = [] -%}
    {%- for field in rule.fields if field.name not in key -%}{%- set _ = compared.append(field.name) -%}{%- endfor %}
    validated as (
        select
            {{ typed }}.*,
            case
                when not is_valid_utf8 then 'not valid UTF-8'
                when not is_json then 'not valid JSON'
                when not is_object then 'not a JSON object'
                {%- for field in rule.fields %}
                {%- set name = field.name %}
                {%- set kind = name ~ '__kind' %}
                {#- a string's text is its value; other fields keep theirs where it is read -#}
                {%- set text = name ~ '__text' if field.type != 'string' else name %}
                {%- set nullable = field.get('nullable', false) and name not in key %}
                {%- set present = 'coalesce(' ~ kind ~ ', ' ~ absent ~ ') <> ' ~ absent %}
                {%- set when_present = present ~ ' and ' if nullable else '' %}
                {%- if not nullable %}
                when coalesce({{ kind }}, {{ absent }}) = {{ absent }} then '{{ name }} missing'
                {%- endif %}
                {%- if field.type == 'string' %}
                when {{ when_present }}({{ kind }} <> {{ text_kind }}{{ " or " ~ name ~ " = ''" if name in key }})
                    then '{{ name }} is not a {{ "non-empty " if name in key }}string'
                {%- elif field.type in ('timestamp', 'date') %}
                {#- an ISO-8601 text: a date alone, or a timestamp to the minute at least -#}
                {%- set form = '^\\d{4}-\\d{2}-\\d{2}' ~ ('T\\d{2}:\\d{2}' if field.type == 'timestamp' else '$') %}
                when {{ when_present }}(
                    {{ kind }} <> {{ text_kind }}
                    {%- if spark %}
                    or not {{ text }} rlike r'{{ form }}'
                    {%- else %}
                    or not regexp_matches({{ text }}, '{{ form }}')
                    {%- endif %}
                    or {{ name }} is null
                )
                    then '{{ name }} is not an ISO-8601 {{ field.type }}'
                {%- elif field.type == 'boolean' %}
                when {{ when_present }}{{ kind }} <> 'BOOLEAN' then '{{ name }} is not a boolean'
                {%- elif field.type == 'integer' %}
                {%- if spark %}
                when {{ when_present }}(not {{ kind }} rlike r'^(BIGINT|INT|SMALLINT|TINYINT)$' or {{ name }} is null)
                {%- else %}
                when {{ when_present }}({{ kind }} not in ('UBIGINT', 'BIGINT') or {{ name }} is null)
                {%- endif %}
                    then '{{ name }} is not an integer'
                {%- else %}
                {#- float and decimal(p, s): any JSON number the type holds -#}
                {%- if spark %}
                when {{ when_present }}(
                    not {{ kind }} rlike r'^(BIGINT|INT|SMALLINT|TINYINT|DOUBLE|FLOAT|DECIMAL)' or {{ name }} is null
                )
                {%- else %}
                when {{ when_present }}(
                    {{ kind }} not in ('UBIGINT', 'BIGINT', 'DOUBLE', 'HUGEINT') or {{ name }} is null
                )
                {%- endif %}
                    then '{{ name }} is not a number'
                {%- endif %}
                {%- if day.get('field') == name %}
                {%- if field.type == 'date' %}
                when {{ when_present }}{{ name }} <> landed_date
                {%- elif spark %}
                when
                    {{ when_present }}date_from_unix_date(cast(floor(unix_seconds({{ name }}) / 86400) as int))
                    <> landed_date
                {%- elif zone == 'UTC' %}
                when {{ when_present }}{{ name }}::date <> landed_date
                {%- else %}
                when {{ when_present }}timezone('{{ zone }}', timezone('UTC', {{ name }}))::date <> landed_date
                {%- endif %}
                    then '{{ name }} ' || {{ text }} || ' is not on the partition day'
                {%- endif %}
                {%- if field.accepted_values is defined and field.accepted_values is not none %}
                when {{ when_present }}{{ name }} not in (
                    {%- for value in field.accepted_values %}'{{ value }}'{{ ', ' if not loop.last }}{% endfor -%}
                )
                    then 'unknown {{ name }} ' || {{ text }}
                {%- endif %}
                {%- if field.accepted_in is defined and field.accepted_in is not none %}
                when {{ when_present }}{{ name }} not in (
                    select known.{{ field.accepted_in.column }} from {{ field.accepted_in.relation }} as known
                )
                    then 'unknown {{ name }} ' || {{ text }}
                {%- endif %}
                {%- endfor %}
            end as malformed_reason
        from {{ typed }}
    ),

    repeated_keys as (
        -- valid keys landed more than once in their day: replays or conflicts
        select
            landed_date,
            {{ key | join(', ') }}
        from validated
        where malformed_reason is null
        group by landed_date, {{ key | join(', ') }}
        having count(*) > 1
    ),

    valid_versions as (
        -- per repeated key and day: whether its copies differ, and which is first
        select
            validated.landed_date,
            {%- for name in key %}
            validated.{{ name }},
            {%- endfor %}
            {%- if compared %}
            min({{ hash }}({{ compared | join(', ') }}))
            <> max({{ hash }}({{ compared | join(', ') }})) as is_conflicting,
            {%- else %}
            false as is_conflicting,
            {%- endif %}
            min({{ row }}(file_name, line_number)) as first_copy
        from validated
        semi join repeated_keys
            on
                validated.landed_date = repeated_keys.landed_date
                {%- for name in key %}
                and validated.{{ name }} = repeated_keys.{{ name }}
                {%- endfor %}
        where validated.malformed_reason is null
        group by validated.landed_date, {% for name in key %}validated.{{ name }}{{ ', ' if not loop.last }}{% endfor %}
    ),

    classified as (
        select
            validated.*,
            coalesce(valid_versions.is_conflicting, false) as is_conflicting,
            case
                when validated.malformed_reason is not null or valid_versions.is_conflicting
                    then 'quarantined'
                -- a key landed once has no versions to compare: its one copy
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
                {%- for name in key %}
                and validated.{{ name }} = valid_versions.{{ name }}
                {%- endfor %}
    )

    select
        -- partition
        landed_date,

        -- where the line came from
        file_name,
        line_number,

        -- the declared fields, typed
        {%- for field in rule.fields %}
        {{ field.name }},
        {%- endfor %}

        -- classification
        line_status,
        case
            when malformed_reason is not null then malformed_reason
            when is_conflicting then 'conflicting versions of {{ rule.get("entity") or key | join(", ") }} '
                {%- if key | length == 1 %}
                || {{ key[0] }}
                {%- else %}
                || concat_ws(', ', {% for name in key -%}
                    cast({{ name }} as {{ 'string' if spark else 'varchar' }}){{ ', ' if not loop.last }}
                {%- endfor %})
                {%- endif %}
        end as quarantine_reason,

        -- the line as landed, for the lines someone will read
        case when line_status = 'quarantined' then line_text end as line_text
    from classified
{% endmacro %}

{% macro spark__refill_classify_landed_lines(raw_lines, rule) %}
    {#
        The classification of a dataset's landed lines in Spark SQL: Spark's parsing and
        typing of each line, then the one rule both engines share (refill_classify_typed_lines:
        the same reasons, statuses and columns; tests/spark/ checks both give the same
        per-day counts, amounts and quarantine on one landing). The spellings that differ
        (docs/spark.md, section 4): JSON through Spark 4's VARIANT (one parse per line,
        then path lookups; a field's kind from schema_of_variant: STRING, BIGINT, DOUBLE,
        DECIMAL(p,s), BOOLEAN, VOID for a JSON null, NULL when missing), xxhash64 for
        DuckDB's 64-bit hash, regular expressions as raw literals, and the UTC day from
        unix seconds, so the session's time zone never decides a day (a timestamp without
        a zone is UTC: a Z is appended before the cast). A day in another zone is refused
        on Spark when the declaration is read (refill_lines_rule).
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

    texts as (
        select
            landed_date,
            file_name,
            line_number,
            line_text,
            is_valid_utf8,
            line_json is not null as is_json,
            startswith(trim(leading concat(chr(32), chr(9), chr(13)) from line_text), '{') as is_object,
            {%- for field in rule.fields %}
            {%- set path = "'$." ~ field.get('json_key', field.name) ~ "'" %}
            -- {{ field.name }}: its JSON kind (a missing field is NULL or VOID) and text
            schema_of_variant(try_variant_get(line_json, {{ path }}, 'variant')) as {{ field.name }}__kind,
            try_variant_get(line_json, {{ path }}, 'string') as {{ field.name }}__text{{ ',' if not loop.last }}
            {%- endfor %}
        from parsed
    ),

    typed as (
        select
            {{ refill_typed_line_columns(rule, spark=true) }}
        from texts
    ),

    {{ refill_classify_typed_lines('typed', rule, spark=true) }}
{% endmacro %}
