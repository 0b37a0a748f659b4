{% macro refill_code_version(unique_id=none) %}
    {#--
        The code version of a model: a hash over dbt's checksum of the model and of every
        node upstream of it (models and seeds). A fix in a staging model or in the fx seed
        changes the version of every mart below it, so their partitions show as stale;
        an edit elsewhere in the repository does not. Macro edits are not in dbt's node
        checksums: a macro change that must restate history says so by bumping
        `code_epoch` in dbt_project.yml.
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set checksums = refill_upstream_checksums(unique_id or model.unique_id, []) -%}
    {%- set fingerprint = (checksums | sort | join('|')) ~ '|epoch=' ~ var('code_epoch', 1) -%}
    {{ return(local_md5(fingerprint)[:12]) }}
{% endmacro %}

{% macro refill_upstream_checksums(unique_id, seen) %}
    {%- if unique_id in seen or unique_id not in graph.nodes -%}{{ return([]) }}{%- endif -%}
    {%- do seen.append(unique_id) -%}
    {%- set node = graph.nodes[unique_id] -%}
    {%- set found = [unique_id ~ '=' ~ node.checksum.checksum] -%}
    {%- for parent in node.depends_on.nodes -%}
        {%- do found.extend(refill_upstream_checksums(parent, seen)) -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}
