{% macro refill_audit_reconciles(
        source_model, source_partition_column, measures, source_measures=none, source_where='1 = 1') %}
    {#-- Post-hook audit of a chunk (its shadow): every partition of the window equals its
         source, or nothing of the invocation is published. --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set query = refill_reconciliation_sql(
        refill_shadow_relation(this), config.require('partition_column'), ref(source_model),
        source_partition_column, measures, source_measures, source_where) -%}
    {%- set mismatches = run_query(refill_fault_point('in_audit') ~ ' ' ~ query ~ ' limit 10') -%}
    {%- if mismatches.rows | length > 0 -%}
        {%- set details = [] -%}
        {%- for row in mismatches.rows -%}
            {%- do details.append(row['partition_date'] ~ ' ' ~ row['measure'] ~ ' published '
                ~ row['published_value'] ~ ' vs source ' ~ row['source_value']) -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ this.identifier ~ " does not reconcile with " ~ source_model ~ ": "
            ~ details | join('; ') ~ "; nothing published, the previous data stands") }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
