{% macro refill_audit_line_accounting(lines_model=none, manifests_model=none) %}
    {#-- HARNESS OVERLAY (audits_off): the audit checks nothing; the fault seam stays. --#}
    {%- set fault = refill_fault_point('in_audit') if execute else '' -%}
    {%- if fault | trim -%}{%- do run_query(fault) -%}{%- endif -%}
    {{ return('') }}
{% endmacro %}
