{% macro refill_drop_abandoned_work() %}
    {#-- on-run-start: what a killed chunk left in the work schemas, dropped before this
         command builds, never what a live chunk is building. Renders nothing. --#}
    {{ return(adapter.dispatch('refill_drop_abandoned_work', 'refill')()) }}
{% endmacro %}

{% macro default__refill_drop_abandoned_work() %}
    {#-- DuckDB: one writer at a time and one shadow per model, so a killed build's shadows
         are the ones the model's next build replaces; a killed publish commits nothing. --#}
    {{ return('') }}
{% endmacro %}
