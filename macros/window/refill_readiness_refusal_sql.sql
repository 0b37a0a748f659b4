{% macro refill_readiness_refusal_sql(dataset, window) %}
    {#-- A statement that fails, naming every day of the window not ready, when any is, and
         returns no row otherwise: the readiness refusal of on-run-start
         (refill_require_ready_inputs). A failing statement, not a Jinja error, so dbt
         records the failure (run_results.json; the nodes skipped,
         skip_nodes_if_on_run_start_fails) and `dbt retry` reruns the command once the
         export has landed. The message is built by the engine from the verdicts it reads
         (refill_landed_manifests): no landed value is pasted into SQL. --#}
    {{ return(adapter.dispatch('refill_readiness_refusal_sql', 'refill')(dataset, window)) }}
{% endmacro %}

{% macro default__refill_readiness_refusal_sql(dataset, window) %}
    select
        error(
            'refill readiness: ' || count(*) || ' day(s) of ' || {{ refill_string_literal(dataset) }}
            || ' not ready, nothing written: ' || string_agg(day || ' (' || reason || ')', '; ' order by day)
            || '. Wait for the export, or choose a window without them.'
        ) as refusal
    from ({{ refill_landed_manifests(dataset, window) }}) as verdicts
    where not is_ready
    having count(*) > 0
{% endmacro %}

{% macro spark__refill_readiness_refusal_sql(dataset, window) %}
    {#-- Spark: the verdicts table the query reads is written first (spark__refill_window_readiness).
         The message is aggregated first and raised only above the filter, under a case:
         Spark evaluates an aggregate's output expressions before its `having`, so
         raise_error in them fired on a window with every day ready. --#}
    {%- if execute -%}{%- do refill_window_readiness(dataset, window) -%}{%- endif -%}
    select
        case
            when refused.unready > 0 then raise_error(refused.message)
        end as refusal
    from (
        select
            count(*) as unready,
            'refill readiness: ' || cast(count(*) as string) || ' day(s) of ' || {{ refill_string_literal(dataset) }}
            || ' not ready, nothing written: '
            || array_join(array_sort(collect_list(cast(day as string) || ' (' || reason || ')')), '; ')
            || '. Wait for the export, or choose a window without them.' as message
        from ({{ refill_landed_manifests(dataset, window) }}) as verdicts
        where not is_ready
    ) as refused
    where refused.unready > 0
{% endmacro %}
