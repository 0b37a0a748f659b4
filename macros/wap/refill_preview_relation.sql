{% macro refill_preview_relation(preview_id, relation, suffix='') %}
    {#-- Where a preview keeps the chunks of a published relation: schema `preview`, named
         `<preview id>__<schema>__<identifier><suffix>` (suffixes as the shadow's: '__ledger',
         '__on_publish'). No consumer reads schema `preview`. --#}
    {{ return(api.Relation.create(
        database=relation.database,
        schema='preview',
        identifier=refill_preview_id(preview_id) ~ '__' ~ relation.schema ~ '__' ~ relation.identifier ~ suffix,
        type='table')) }}
{% endmacro %}
