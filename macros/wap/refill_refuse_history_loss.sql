{% macro refill_refuse_history_loss(window) %}
    {#--
        A full refresh replaces the whole table with the landed days (the window). A day
        published before whose landing is gone (retention) would silently vanish: refused,
        naming the days, unless var allow_dropping_unlanded_days is true. Then the publish
        drops them from the table and from the ledger (and so from ops.data_as_of) together.
    --#}
    {%- if var('allow_dropping_unlanded_days', false) in (true, 'true') -%}{{ return('') }}{%- endif -%}
    {%- set lost = run_query(
        "select partition_date from ops.partition_ledger"
        ~ " where model_name = " ~ refill_string_literal(this.identifier)
        ~ " and status = 'published' and not " ~ refill_window_predicate('partition_date')
        ~ " order by 1") -%}
    {%- if lost.rows | length > 0 -%}
        {%- set days = lost.columns[0].values() -%}
        {{ exceptions.raise_compiler_error(
            "refill window: --full-refresh would drop " ~ days | length ~ " published day(s) of "
            ~ this.identifier ~ " whose landing is gone (" ~ days[:5] | join(', ')
            ~ (', ...' if days | length > 5 else '') ~ "); restore their landing, or pass "
            ~ "--vars '{allow_dropping_unlanded_days: true}' to drop them; nothing written") }}
    {%- endif -%}
{% endmacro %}
