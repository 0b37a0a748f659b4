{% macro refill_expected_view_sql(expected_sql, identifier=none) %}
    {#-- The view ops.<version>__expected: what this version must publish per day from the
         published upstream facts; `refill cutover` checks a version against it. Staged
         with refill_on_publish, so it changes only with a publish (on Spark a cutover's
         own process makes it again: refill_version_views). `identifier`: the version's
         table, by default the model being built. --#}
    {{ return('create or replace view ops.' ~ (identifier or this.identifier) ~ '__expected as ' ~ expected_sql) }}
{% endmacro %}
