{% macro refill_drop_shadows(nodes) %}
    {#-- The chunk's work tables, once published or abandoned. --#}
    {%- for node in nodes %}
    drop table if exists {{ refill_shadow_relation(refill_node_relation(node)) }};
    drop table if exists {{ refill_shadow_relation(refill_node_relation(node), '__ledger') }};
    drop table if exists {{ refill_shadow_relation(refill_node_relation(node), '__on_publish') }};
    {%- endfor %}
{% endmacro %}
