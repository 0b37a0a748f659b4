{% macro refill_audit_converted(column, day_column, currency_column) %}
    {#-- Post-hook audit of a chunk (its shadow): every row has its converted amount. A
         NULL means no fx rate for that day and currency: the chunk fails naming them,
         rather than publish revenue that silently leaves the payment out. --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set missing = run_query(
        refill_fault_point('in_audit')
        ~ " select " ~ day_column ~ " as day, " ~ currency_column ~ " as currency, count(*) as payments"
        ~ " from " ~ refill_shadow_relation(this) ~ " where " ~ column ~ " is null"
        ~ " group by 1, 2 order by 1, 2 limit 10") -%}
    {%- if missing.rows | length > 0 -%}
        {%- set details = [] -%}
        {%- for row in missing.rows -%}
            {%- do details.append(row['day'] ~ ' ' ~ row['currency'] ~ ' (' ~ row['payments'] ~ ' payments)') -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ this.identifier ~ "." ~ column ~ " has no fx rate for "
            ~ details | join('; ') ~ "; add the rates to seeds/fx_rates_daily.csv; nothing published, "
            ~ "the previous data stands") }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
