{% macro refill_audit_unique_in_window(column) %}
    {#-- Post-hook audit: `column` is unique across the window's partitions. --#}
    {%- if not execute or refill_broken_variant() -%}{{ return('') }}{%- endif -%}
    {%- set partition_column = config.require('partition_column') -%}
    {%- set duplicates = run_query(
        "select " ~ column ~ " as key_value, min(" ~ partition_column ~ ") as first_day, count(*) as copies"
        ~ " from " ~ this ~ " where " ~ refill_window_predicate(partition_column)
        ~ " group by 1 having count(*) > 1 order by 2, 1 limit 5") -%}
    {%- if duplicates.rows | length > 0 -%}
        {%- set details = [] -%}
        {%- for row in duplicates.rows -%}
            {%- do details.append(row['first_day'] ~ ' ' ~ column ~ '=' ~ row['key_value'] ~ ' x' ~ row['copies']) -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ this.identifier ~ "." ~ column ~ " is not unique in the window: "
            ~ details | join('; ') ~ "; rolled back, the previous data stands") }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
