{% macro refill_expected_view_sql(expected_sql) %}
    {#-- The view ops.<version>__expected: what this version must publish per day from the
         published upstream facts; `refill cutover` checks a version against it. Staged
         with refill_on_publish, so it changes only with a publish. --#}
    {{ return('create or replace view ops.' ~ this.identifier ~ '__expected as ' ~ expected_sql) }}
{% endmacro %}
