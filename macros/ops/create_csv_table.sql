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
