{% macro refill_fault_point(point) %}
    {#--
        A named point where the fault-injection tests make a run fail, to prove that a
        failure there leaves the warehouse as it was. Inert unless the var
        `refill_inject_fault` names this point; nothing in production sets it.
        Points: after_delete (between the window's delete and insert), in_audit,
        before_ledger (audits passed, ledger not yet written).
    --#}
    {%- if var('refill_inject_fault', none) == point -%}
        select error('refill fault injected at {{ point }} in {{ this.identifier }}');
    {%- endif -%}
{% endmacro %}
