{% macro refill_fault_point(point) %}
    {#--
        A named seam where a failure can be injected, to prove that a failure there
        leaves the warehouse as it was. In the product it renders nothing and reads
        nothing: no var, no environment variable switches it on. The harness replaces
        this file in a temporary copy of the project (harness/overlay.py) with an armed
        version that renders one SQL statement ending in `;` (e.g. `select error(...)`),
        which the script at the seam then executes.
        Points (docs in macros/faults/_faults__macros.yml): in_audit, before_shadow_ledger,
        publish_begin, after_delete, before_ledger, before_commit.
    --#}
    {{ return('') }}
{% endmacro %}
