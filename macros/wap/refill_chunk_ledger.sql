{% macro refill_chunk_ledger(relation) %}
    {#-- The ledger rows of a model as this invocation sees them, as a relation or a
         subquery: the chunk's staged rows (its shadow ledger) when this command builds
         the model, else its published rows in ops.partition_ledger. --#}
    {%- set chunk = refill_chunk_relation(relation) -%}
    {%- if chunk != relation -%}
        {{ return(refill_shadow_relation(relation, '__ledger')) }}
    {%- endif -%}
    {{ return("(select * from ops.partition_ledger where model_name = "
        ~ refill_string_literal(relation.identifier) ~ " and status = 'published')") }}
{% endmacro %}
