{% macro refill_audit_rows_in_window(shadow, partition_column) %}
    {#-- Every row of a chunk is dated inside its window: the publish deletes the window
         and inserts the chunk, so a row dated elsewhere (a clock date, a bad join) would
         land on a day the run never replaced. --#}
    {%- set outside = run_query(
        refill_fault_point('in_audit')
        ~ " select " ~ partition_column ~ " as day, count(*) as rows from " ~ shadow
        ~ " where " ~ partition_column ~ " is null or not " ~ refill_window_predicate(partition_column)
        ~ " group by 1 order by 1 nulls first limit 5") -%}
    {%- if outside.rows | length > 0 -%}
        {%- set details = [] -%}
        {%- for row in outside.rows -%}
            {%- do details.append((row['day'] or 'no date') ~ ' x' ~ row['rows']) -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ this.identifier ~ " wrote rows outside its window: " ~ details | join('; ')
            ~ "; nothing published, the previous data stands") }}
    {%- endif -%}
{% endmacro %}
