{% macro default__get_where_subquery(relation) -%}
    {#--
        dbt's `where` for data tests, plus the window. A test with
        `config: {meta: {window_column: <column>}}` reads only the window's partitions,
        so its cost follows the chunk, not the history. The window cannot go into the
        `where` config itself: dbt renders test configs while parsing, without project
        macros, so it is applied here, when the test runs.
        A model this command builds is tested on its chunk (refill_chunk_relation: the
        shadow), before anything is published; otherwise on what is published.
    --#}
    {%- set relation = refill_chunk_relation(relation) -%}
    {%- set filters = [] -%}
    {%- set where = config.get('where', '') -%}
    {%- if where -%}{%- do filters.append('(' ~ where ~ ')') -%}{%- endif -%}
    {%- set window_column = (config.get('meta') or {}).get('window_column') -%}
    {%- if window_column -%}{%- do filters.append(refill_window_test_filter(window_column)) -%}{%- endif -%}
    {%- if filters -%}
        {%- set filtered -%}
            (select * from {{ relation }} where {{ filters | join(' and ') }}) dbt_subquery
        {%- endset -%}
        {%- do return(filtered) -%}
    {%- endif -%}
    {%- do return(relation) -%}
{%- endmacro %}
