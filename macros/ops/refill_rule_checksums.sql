{% macro refill_rule_checksums(macro_id, seen) %}
    {#-- The source of every row rule a project macro is or calls, at any depth (the
         dispatched line reader calls the line-split rule), as checksums of its meaning
         (refill_code_form: comments and layout change none); plumbing itself and dbt's
         own macros give none. --#}
    {%- set name = macro_id.split('.')[-1] -%}
    {%- set is_ours = macro_id.startswith('macro.' ~ project_name ~ '.') -%}
    {%- if macro_id in seen or not is_ours or name not in context -%}{{ return([]) }}{%- endif -%}
    {%- do seen.append(macro_id) -%}
    {%- set macro = context[name].macro -%}
    {%- set found = [] -%}
    {%- if macro.original_file_path.startswith('macros/rules/') -%}
        {%- do found.append(macro_id ~ '=' ~ local_md5(refill_code_form(macro.macro_sql))) -%}
    {%- endif -%}
    {%- for called in macro.depends_on.macros -%}
        {%- do found.extend(refill_rule_checksums(called, seen)) -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}
