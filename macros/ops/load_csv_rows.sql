{% macro spark__load_csv_rows(model, agate_table) %}
    {#-- dbt-spark's seed load (its batches, bindings and casts), except the first batch
         replaces the table's files: a seed is external at its folder (spark__location_clause),
         so the files a previous load or process left there would otherwise stay beside
         the new rows. --#}
    {%- set batch_size = get_batch_size() -%}
    {%- set column_override = model['config'].get('column_types', {}) -%}
    {%- set statements = [] -%}
    {%- for chunk in agate_table.rows | batch(batch_size) -%}
        {%- set first_batch = loop.first -%}
        {%- set bindings = [] -%}
        {%- for row in chunk -%}
            {%- do bindings.extend(row) -%}
        {%- endfor -%}
        {%- set sql -%}
            insert {{ 'overwrite table' if first_batch else 'into' }} {{ this.render() }} values
            {% for row in chunk -%}
                ({%- for col_name in agate_table.column_names -%}
                    {%- set inferred_type = adapter.convert_type(agate_table, loop.index0) -%}
                    {%- set type = refill_spark_type(column_override.get(col_name, inferred_type)) -%}
                    cast({{ get_binding_char() }} as {{ type }})
                    {%- if not loop.last %},{% endif -%}
                {%- endfor -%})
                {%- if not loop.last %},{% endif %}
            {%- endfor %}
        {%- endset -%}
        {%- do adapter.add_query(sql, bindings=bindings, abridge_sql_log=True) -%}
        {%- if first_batch -%}{%- do statements.append(sql) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(statements[0]) }}
{% endmacro %}
