{% macro refill_date_list(days) %}
    {#-- A list of dates (parsed, never text from outside) as the engine's array literal:
         ops.run_log.partitions_touched. --#}
    {{ return(adapter.dispatch('refill_date_list', 'refill')(days)) }}
{% endmacro %}

{% macro default__refill_date_list(days) %}
    {%- set literals = [] -%}
    {%- for day in days -%}{%- do literals.append("date '" ~ day.isoformat() ~ "'") -%}{%- endfor -%}
    {{ return('cast([' ~ literals | join(', ') ~ '] as date[])') }}
{% endmacro %}

{% macro spark__refill_date_list(days) %}
    {%- set literals = [] -%}
    {%- for day in days -%}{%- do literals.append("date '" ~ day.isoformat() ~ "'") -%}{%- endfor -%}
    {{ return('cast(array(' ~ literals | join(', ') ~ ') as array<date>)') }}
{% endmacro %}
