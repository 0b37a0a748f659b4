{% macro refill_require_ready_inputs() %}
    {#--
        on-run-start, once the ops relations exist and before any node runs: what the
        invocation reads, checked once, so each refusal is said in one line instead of by
        every node that reads the same input, and before a seed is loaded or a table built.
        In order: the window (refill_window: its dates, its width, a forgotten --vars); a
        window given with --full-refresh; --defer; on DuckDB, a seed or a published model a
        node reads that this warehouse lacks and this command does not build (an empty CI
        warehouse); then the readiness of every landing dataset the selected nodes read
        (refill_landing_datasets_read): a window given with a day not ready fails the
        statement this hook renders (refill_readiness_refusal_sql, so `dbt retry` can follow),
        naming every such day; with no window (every landed day) the days not ready are
        named and left out, and a full refresh that would drop such a published day is
        refused. Renders that statement, or nothing. Commands that only render SQL check
        nothing.
    --#}
    {%- if not execute or flags.WHICH not in ('build', 'run', 'test', 'retry') -%}{{ return('') }}{%- endif -%}
    {%- set window = refill_window() -%}
    {%- set named = var('start_date', none) is not none or var('end_date', none) is not none -%}
    {%- set fully_rebuilt = [] -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.config.materialized == 'partitioned'
        and refill_builds(node) and refill_is_full_refresh(node) -%}
        {%- do fully_rebuilt.append(node) -%}
    {%- endfor -%}
    {%- if named and fully_rebuilt -%}
        {{ exceptions.raise_compiler_error(
            "refill window: --full-refresh rebuilds every landed day; drop start_date/end_date, "
            ~ "or rebuild the window without --full-refresh") }}
    {%- endif -%}
    {%- if invocation_args_dict.get('defer') -%}
        {{ exceptions.raise_compiler_error(
            "refill input: --defer is not supported: a deferred ref reads the production warehouse's "
            ~ "tables, which this target's warehouse does not hold, while the ledger and the audits read this "
            ~ "warehouse's own; build the parents instead (--select +state:modified+ --indirect-selection "
            ~ "buildable), nothing written") }}
    {%- endif -%}

    {%- set refusals = [] -%}
    {%- for dataset in refill_landing_datasets_read() -%}
        {%- if not window.get('ready_days_only') -%}
            {%- do refusals.append('(' ~ refill_readiness_refusal_sql(dataset, window) ~ ')') -%}
        {%- else -%}
            {%- set ready = refill_require_landing_ready(dataset, window, announce=true) -%}
            {%- if refill_command_writes() and ready | length == 0 -%}
                {{ exceptions.raise_compiler_error(
                    "refill readiness: no landed day of " ~ dataset ~ " is ready, nothing written. "
                    ~ "Wait for the export.") }}
            {%- endif -%}
            {%- if fully_rebuilt and var('allow_dropping_unlanded_days', false) not in (true, 'true') -%}
                {%- do refill_refuse_dropping_unready_days(fully_rebuilt, window, ready) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}

    {%- if target.type == 'duckdb' and flags.WHICH in ('build', 'run') -%}
        {%- do refill_require_present_inputs() -%}
    {%- endif -%}
    {{ return(refusals | join('\nunion all\n')) }}
{% endmacro %}
