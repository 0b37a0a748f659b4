{% macro refill_upstream_checksums(unique_id, seen, seed_contents, reference_seeds=[]) %}
    {%- if unique_id in seen or unique_id not in graph.nodes -%}{{ return([]) }}{%- endif -%}
    {%- do seen.append(unique_id) -%}
    {%- set node = graph.nodes[unique_id] -%}
    {%- if node.resource_type != 'seed' and node.language == 'sql' -%}
        {#-- Its meaning, not its bytes (dbt's checksum): a comment or a layout change keeps
             every day current (refill_code_form). --#}
        {%- set checksum = local_md5(refill_code_form(node.raw_code)) -%}
    {%- elif node.resource_type != 'seed' -%}
        {%- set checksum = node.checksum.checksum -%}
    {%- elif unique_id in reference_seeds -%}
        {#-- Reference data: its rows are each day's input (the ledger's reference
             fingerprint); its config (column types, ...) is code. --#}
        {%- set checksum = 'config:' ~ local_md5(tojson(node.config, sort_keys=true)) -%}
    {%- else -%}
        {#-- Any other seed by its content key (sha256 of its file), never dbt's checksum (a
             path over 1 MiB). --#}
        {%- set checksum = seed_contents.get(unique_id) -%}
    {%- endif -%}
    {%- set found = [unique_id ~ '=' ~ checksum] -%}
    {%- for macro_id in node.depends_on.macros -%}
        {%- do found.extend(refill_rule_checksums(macro_id, seen)) -%}
    {%- endfor -%}
    {%- for parent in node.depends_on.nodes -%}
        {%- do found.extend(refill_upstream_checksums(parent, seen, seed_contents, reference_seeds)) -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}
