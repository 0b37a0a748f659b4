{% macro refill_audit_line_accounting(lines_model='stg_payments__lines', manifests_model='stg_payments__manifests') %}
    {#-- HARNESS OVERLAY (audits_off): the audit checks nothing; the fault seam stays. --#}
    {%- set fault = refill_fault_point('in_audit') if execute else '' -%}
    {%- if fault | trim -%}{%- do run_query(fault) -%}{%- endif -%}
    {{ return('') }}
{% endmacro %}
