{% macro refill_upstream_checksums(unique_id, seen) %}
    {%- if unique_id in seen or unique_id not in graph.nodes -%}{{ return([]) }}{%- endif -%}
    {%- do seen.append(unique_id) -%}
    {%- set node = graph.nodes[unique_id] -%}
    {%- set found = [unique_id ~ '=' ~ node.checksum.checksum] -%}
    {%- for macro_id in node.depends_on.macros -%}
        {%- do found.extend(refill_rule_checksums(macro_id, seen)) -%}
    {%- endfor -%}
    {%- for parent in node.depends_on.nodes -%}
        {%- do found.extend(refill_upstream_checksums(parent, seen)) -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}
