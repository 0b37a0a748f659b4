{% macro refill_audit_version_reconciles(expected_sql, upstream_model) %}
    {#--
        Post-hook audit of one version of a versioned model, inside its transaction:
        every day of the window equals what `expected_sql` (one row per partition_date,
        one column per measure) says it must be under this version's rules, or the
        delete, the insert and the ledger rows roll back together.

        The expected figures are kept as the view ops.<relation>__expected, so that
        `refill cutover` checks a version against the same rules the audit used.
        Every day of the window must also be published upstream: a version built alone
        (`--select fct_daily_revenue_v2`) over days its facts do not hold would
        otherwise publish nothing and say nothing.
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set window = refill_window() -%}
    {%- set partition_column = config.require('partition_column') -%}
    {%- set upstream = ref(upstream_model) -%}

    {%- set unpublished = run_query(
        "select days.day::date as day"
        ~ " from generate_series(date '" ~ window.start_date ~ "', date '" ~ window.end_date
        ~ "', interval 1 day) as days (day)"
        ~ " where days.day::date not in (select partition_date from ops.partition_ledger"
        ~ " where model_name = '" ~ upstream.identifier ~ "' and status = 'published')"
        ~ " order by 1") -%}
    {%- if unpublished.rows | length > 0 -%}
        {%- set days = unpublished.columns[0].values() -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ this.identifier ~ " reads " ~ upstream.identifier
            ~ ", which is not published for " ~ days | length ~ " day(s) of the window ("
            ~ days[:5] | join(', ') ~ (', ...' if days | length > 5 else '')
            ~ "); build " ~ upstream.identifier ~ " for them first; rolled back, the previous data stands") }}
    {%- endif -%}

    {%- set expected = 'ops.' ~ this.identifier ~ '__expected' -%}
    {%- do run_query('create or replace view ' ~ expected ~ ' as ' ~ expected_sql) -%}
    {%- set columns = run_query(
        "select column_name from information_schema.columns"
        ~ " where table_schema = 'ops' and table_name = '" ~ this.identifier ~ "__expected'"
        ~ " and column_name <> 'partition_date' order by ordinal_position") -%}
    {%- set measures = {} -%}
    {%- for column in columns.columns[0].values() -%}
        {%- do measures.update({column: 'sum(' ~ column ~ ')'}) -%}
    {%- endfor -%}

    {%- if var('refill_inject_fault', none) == 'in_audit' -%}
        {%- do run_query(refill_fault_point('in_audit')) -%}
    {%- endif -%}
    {%- set mismatches = run_query(refill_reconciliation_sql(
        this, partition_column, expected, 'partition_date', measures) ~ ' limit 10') -%}
    {%- if mismatches.rows | length > 0 -%}
        {%- set details = [] -%}
        {%- for row in mismatches.rows -%}
            {%- do details.append(row['partition_date'] ~ ' ' ~ row['measure'] ~ ' published '
                ~ row['published_value'] ~ ' vs expected ' ~ row['source_value']) -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ this.identifier ~ " does not reconcile with " ~ upstream.identifier
            ~ " under its version's rules: " ~ details | join('; ')
            ~ "; rolled back, the previous data stands") }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
