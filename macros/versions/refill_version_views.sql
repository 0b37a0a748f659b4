{% macro refill_version_views(model_name) %}
    {{ return(adapter.dispatch('refill_version_views', 'refill')(model_name)) }}
{% endmacro %}

{% macro default__refill_version_views(model_name) %}
    {#-- DuckDB: nothing to do. Its views live in the warehouse file, made by the publish
         that built each version; a cutover reads them as they are. --#}
    {{ return('') }}
{% endmacro %}
