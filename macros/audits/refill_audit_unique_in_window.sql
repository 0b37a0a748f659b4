{% macro refill_audit_unique_in_window(columns) %}
    {#-- Post-hook audit of a chunk (its shadow): `columns`, the model's grain, are unique
         across the window's partitions. --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set columns = [columns] if columns is string else columns -%}
    {%- set shadow = refill_shadow_relation(this) -%}
    {%- set key = columns | join(', ') -%}
    {%- set duplicates = run_query(
        refill_fault_point('in_audit')
        ~ " select " ~ key ~ ", count(*) as copies from " ~ shadow
        ~ " group by " ~ key ~ " having count(*) > 1 order by all limit 5") -%}
    {%- if duplicates.rows | length > 0 -%}
        {%- set details = [] -%}
        {%- for row in duplicates.rows -%}
            {%- set values = [] -%}
            {%- for column in columns -%}{%- do values.append(column ~ '=' ~ row[column]) -%}{%- endfor -%}
            {%- do details.append(values | join(' ') ~ ' x' ~ row['copies']) -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ this.identifier ~ " (" ~ key ~ ") is not unique in the window: "
            ~ details | join('; ') ~ "; nothing published, the previous data stands") }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
