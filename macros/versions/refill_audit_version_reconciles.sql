{% macro refill_audit_version_reconciles(expected_sql, upstream_model) %}
    {#--
        Post-hook audit of one version of a versioned model, on its chunk (shadow): every
        day of the window equals what `expected_sql` (one row per partition_date, one
        column per measure, computed from the upstream chunk under this version's rules)
        says it must be, or nothing of the invocation is published.

        Every day of the window must also be published upstream, or built upstream in this
        invocation: a version built alone (`--select fct_daily_revenue_v2`) over days its
        facts do not hold would otherwise publish nothing and say nothing. (A window no one
        named, every landed day, leaves out the days not ready: built upstream in this
        invocation, those are the upstream's own to leave out.)
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set window = refill_window() -%}
    {%- set partition_column = config.require('partition_column') -%}
    {%- set upstream = ref(upstream_model) -%}

    {%- set left_out_upstream = window.get('ready_days_only') and refill_chunk_relation(upstream) != upstream -%}
    {%- set unpublished = run_query(
        "select days.day::date as day"
        ~ " from generate_series(date '" ~ window.start_date ~ "', date '" ~ window.end_date
        ~ "', interval 1 day) as days (day)"
        ~ " where days.day::date not in (select partition_date from " ~ refill_chunk_ledger(upstream) ~ ")"
        ~ " order by 1") -%}
    {%- if unpublished.rows | length > 0 and not left_out_upstream -%}
        {%- set days = unpublished.columns[0].values() -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ this.identifier ~ " reads " ~ upstream.identifier
            ~ ", which is not published for " ~ days | length ~ " day(s) of the window ("
            ~ days[:5] | join(', ') ~ (', ...' if days | length > 5 else '')
            ~ "); build " ~ upstream.identifier ~ " for them first; nothing published, the previous data stands") }}
    {%- endif -%}

    {%- set expected = '(' ~ expected_sql ~ ')' -%}
    {%- set measures = {} -%}
    {%- for column in run_query('select * from ' ~ expected ~ ' limit 0').column_names -%}
        {%- if column != 'partition_date' -%}{%- do measures.update({column: 'sum(' ~ column ~ ')'}) -%}{%- endif -%}
    {%- endfor -%}

    {%- set mismatches = run_query(refill_fault_point('in_audit') ~ ' ' ~ refill_reconciliation_sql(
        refill_shadow_relation(this), partition_column, expected, 'partition_date', measures) ~ ' limit 10') -%}
    {%- if mismatches.rows | length > 0 -%}
        {%- set details = [] -%}
        {%- for row in mismatches.rows -%}
            {%- do details.append(row['partition_date'] ~ ' ' ~ row['measure'] ~ ' published '
                ~ row['published_value'] ~ ' vs expected ' ~ row['source_value']) -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ this.identifier ~ " does not reconcile with " ~ upstream.identifier
            ~ " under its version's rules: " ~ details | join('; ')
            ~ "; nothing published, the previous data stands") }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
