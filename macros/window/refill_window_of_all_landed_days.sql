{% macro refill_window_of_all_landed_days() %}
    {%- if not execute -%}
        {#-- Parsing only: no dates are needed to build the graph. --#}
        {%- set dummy_day = modules.datetime.date(1970, 1, 1) -%}
        {{ return({'start_date': dummy_day, 'end_date': dummy_day, 'days': 1, 'ready_days_only': true}) }}
    {%- endif -%}

    {%- set writes = refill_command_writes() -%}
    {%- if writes and not flags.FULL_REFRESH and refill_warehouse_has_partitions() -%}
        {{ exceptions.raise_compiler_error(
            "refill window: no window given and this warehouse already has published partitions; "
            ~ "pass --vars '{start_date: YYYY-MM-DD, end_date: YYYY-MM-DD}', or --full-refresh to rebuild every landed day") }}
    {%- endif -%}

    {#-- every day any dataset this invocation reads has landed (every declared one for a
         command that reads none), so a window no one named covers each of them --#}
    {%- set datasets = refill_landing_datasets_read() or refill_declared_datasets() -%}
    {%- set days = [] -%}
    {%- for dataset in datasets -%}{%- do days.extend(refill_landed_days(dataset)) -%}{%- endfor -%}
    {%- set landed = days | unique | sort -%}
    {%- if landed | length == 0 and not writes -%}
        {%- set dummy_day = modules.datetime.date(1970, 1, 1) -%}
        {{ return({'start_date': dummy_day, 'end_date': dummy_day, 'days': 1, 'ready_days_only': true}) }}
    {%- endif -%}
    {%- if landed | length == 0 -%}
        {{ exceptions.raise_compiler_error(
            "refill window: no window given and nothing has landed under " ~ refill_landing_root()
            ~ "; land data first or pass start_date/end_date") }}
    {%- endif -%}
    {%- set start_date = modules.datetime.date.fromisoformat(landed[0]) -%}
    {%- set end_date = modules.datetime.date.fromisoformat(landed[-1]) -%}
    {#-- Named by no one: the run reads the ready days among them (refill_require_landing_ready). --#}
    {{ return({'start_date': start_date, 'end_date': end_date, 'days': (end_date - start_date).days + 1,
        'ready_days_only': true}) }}
{% endmacro %}
