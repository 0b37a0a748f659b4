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

{% macro spark__create_csv_table(model, agate_table) %}
    {#-- dbt-spark's seed table, with the project's column types in Spark's spelling. --#}
    {%- set column_override = model['config'].get('column_types', {}) -%}
    {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
    {%- set sql -%}
        create table {{ this.render() }} (
            {%- for col_name in agate_table.column_names -%}
                {%- set inferred_type = adapter.convert_type(agate_table, loop.index0) -%}
                {%- set type = refill_spark_type(column_override.get(col_name, inferred_type)) -%}
                {{ adapter.quote_seed_column(col_name | string, quote_seed_column) }} {{ type }}
                {%- if not loop.last -%}, {%- endif -%}
            {%- endfor -%}
        )
        {{ file_format_clause() }}
        {{ location_clause() }}
    {%- endset -%}
    {%- call statement('_') -%}{{ sql }}{%- endcall -%}
    {{ return(sql) }}
{% endmacro %}

{% macro refill_spark_type(type) %}
    {#-- DuckDB's `varchar` (dbt_project.yml's seed column types) is Spark's `string`
         (Spark's varchar needs a length). --#}
    {{ return('string' if (type | lower | trim) == 'varchar' else type) }}
{% endmacro %}
