{% macro refill_refuse_dropping_unready_days(nodes, window, ready) %}
    {#-- A full refresh without a window rebuilds the ready landed days: a day it leaves out
         that `nodes` (the models it rebuilds) have published would silently leave their
         tables and the ledger. Refused naming the days, unless allow_dropping_unlanded_days
         (the same consent as for a day whose landing is gone, refill_refuse_history_loss). --#}
    {%- set ready_days = ready | map(attribute='day') | map('string') | list -%}
    {%- set left_out = [] -%}
    {%- for offset in range(window.days) -%}
        {%- set day = window.start_date + modules.datetime.timedelta(days=offset) -%}
        {%- if day.isoformat() not in ready_days -%}{%- do left_out.append(refill_date_literal(day)) -%}{%- endif -%}
    {%- endfor -%}
    {%- if not left_out or not refill_table_exists('ops', 'partition_ledger') -%}{{ return('') }}{%- endif -%}
    {%- set names = [] -%}
    {%- for node in nodes -%}
        {%- do names.append(refill_string_literal(refill_node_relation(node).identifier)) -%}
    {%- endfor -%}
    {%- set published = run_query(
        "select distinct cast(partition_date as string) from ops.partition_ledger"
        ~ " where status = 'published' and model_name in (" ~ names | join(', ') ~ ")"
        ~ " and partition_date in (" ~ left_out | join(', ') ~ ") order by 1").columns[0].values() -%}
    {%- if published | length > 0 -%}
        {{ exceptions.raise_compiler_error(
            "refill readiness: --full-refresh would drop " ~ published | length ~ " published day(s) that are not "
            ~ "ready now (" ~ published[:5] | join(', ') ~ (', ...' if published | length > 5 else '')
            ~ "); wait for their export, or pass --vars '{allow_dropping_unlanded_days: true}' to drop them; "
            ~ "nothing written") }}
    {%- endif -%}
{% endmacro %}
