{% macro refill_code_version(unique_id=none) %}
    {#--
        The code version of a model: a hash over dbt's checksum of the model and of every
        node upstream of it (models and seeds), and over the source of every row rule
        (a macro under macros/rules/) those nodes call. A fix in a staging model, in the
        classification of landed lines or in the fx seed changes the version of every
        mart below it, so their partitions show as stale; an edit elsewhere in the
        repository does not. Other macros (audits, ledger, window plumbing) are not in
        dbt's node checksums: a change there that must restate history says so by
        bumping `code_epoch` in dbt_project.yml.
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
    {%- for macro_id in node.depends_on.macros -%}
        {%- do found.extend(refill_rule_checksums(macro_id, seen)) -%}
    {%- endfor -%}
    {%- for parent in node.depends_on.nodes -%}
        {%- do found.extend(refill_upstream_checksums(parent, seen)) -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}

{% macro refill_rule_checksums(macro_id, seen) %}
    {#-- The source of every row rule a project macro is or calls, at any depth (the
         dispatched line reader calls the line-split rule), as checksums; plumbing itself
         and dbt's own macros give none. --#}
    {%- set name = macro_id.split('.')[-1] -%}
    {%- set is_ours = macro_id.startswith('macro.' ~ project_name ~ '.') -%}
    {%- if macro_id in seen or not is_ours or name not in context -%}{{ return([]) }}{%- endif -%}
    {%- do seen.append(macro_id) -%}
    {%- set macro = context[name].macro -%}
    {%- set found = [] -%}
    {%- if macro.original_file_path.startswith('macros/rules/') -%}
        {%- do found.append(macro_id ~ '=' ~ local_md5(macro.macro_sql)) -%}
    {%- endif -%}
    {%- for called in macro.depends_on.macros -%}
        {%- do found.extend(refill_rule_checksums(called, seen)) -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}
