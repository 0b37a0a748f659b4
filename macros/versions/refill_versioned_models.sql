{% macro refill_versioned_models() %}
    {#--
        Every versioned model of the project, from dbt's graph:
        {name: {'latest_version': int, 'versions': {int: relation}}}. The versions'
        relations are the tables dbt writes (<name>_v<n>), schema-qualified only, so a
        view over them keeps working when the warehouse file is copied or renamed.
    --#}
    {%- set found = {} -%}
    {#-- dbt's graph is empty while it parses: no versions then. --#}
    {%- for node in graph.get('nodes', {}).values() -%}
        {%- if node.resource_type == 'model' and node.version is not none -%}
            {%- if node.name not in found -%}
                {%- do found.update({node.name: {
                    'latest_version': (node.latest_version or node.version) | int,
                    'versions': {}}}) -%}
            {%- endif -%}
            {%- set relation = api.Relation.create(
                database=node.database, schema=node.schema, identifier=node.alias) -%}
            {%- do found[node.name]['versions'].update({node.version | int: relation.include(database=false)}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}
