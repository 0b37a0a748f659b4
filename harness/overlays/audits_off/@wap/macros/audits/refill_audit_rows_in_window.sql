{% macro refill_audit_rows_in_window(shadow, partition_column) %}
    {#-- HARNESS OVERLAY (audits_off): the audit checks nothing; the fault seam stays. --#}
    {%- set fault = refill_fault_point('in_audit') if execute else '' -%}
    {%- if fault | trim -%}{%- do run_query(fault) -%}{%- endif -%}
{% endmacro %}
