{% macro refill_audit_reconciles(source_model, source_partition_column, measures, source_measures=none, source_where='1 = 1') %}
    {#-- Post-hook audit: every partition of the window equals its source, or the whole
         transaction (delete, insert, ledger) rolls back. --#}
    {%- if not execute or refill_broken_variant() -%}{{ return('') }}{%- endif -%}
    {%- set query = refill_reconciliation_sql(
        this, config.require('partition_column'), ref(source_model), source_partition_column,
        measures, source_measures, source_where) -%}
    {%- if var('refill_inject_fault', none) == 'in_audit' -%}
        {%- do run_query(refill_fault_point('in_audit')) -%}
    {%- endif -%}
    {%- set mismatches = run_query(query ~ ' limit 10') -%}
    {%- if mismatches.rows | length > 0 -%}
        {%- set details = [] -%}
        {%- for row in mismatches.rows -%}
            {%- do details.append(row['partition_date'] ~ ' ' ~ row['measure'] ~ ' published '
                ~ row['published_value'] ~ ' vs source ' ~ row['source_value']) -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ this.identifier ~ " does not reconcile with " ~ source_model ~ ": "
            ~ details | join('; ') ~ "; rolled back, the previous data stands") }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
