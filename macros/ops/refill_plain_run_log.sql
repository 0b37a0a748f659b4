{% macro refill_plain_run_log(results) %}
    {#--
        A plain dbt invocation's row of ops.run_log (refill's flows write their own, from
        refill/warehouse/ops.py, and pass var refill_run_id): run_id its invocation_id (the
        ledger rows it publishes name the same), command `dbt <command>`, the path, the
        window and the selection as given in `parameters`, and its outcome: `succeeded`
        with the days it published, or `failed` naming the nodes that failed, nothing
        published. A list of statements for refill_publish to run with the publish (on
        DuckDB in its transaction): none for a flow's invocation, or one that built no
        partitioned model (a `dbt seed`, a `dbt test`).
    --#}
    {%- if var('refill_run_id', none) is not none -%}{{ return([]) }}{%- endif -%}
    {%- set failing = ('error', 'fail', 'skipped', 'runtime error', 'partial success') -%}
    {%- set models = [] -%}
    {%- set errors = [] -%}
    {%- set skipped = [] -%}
    {%- for result in results if result.node is defined and result.node is not none -%}
        {%- set name = result.node.alias if result.node.resource_type == 'model' else result.node.name -%}
        {%- if result.node.resource_type == 'model' and result.node.config.materialized == 'partitioned' -%}
            {%- do models.append(name) -%}
        {%- endif -%}
        {%- if result.status == 'skipped' -%}
            {%- do skipped.append(name) -%}
        {%- elif result.status in failing -%}
            {%- do errors.append(name ~ ' (' ~ result.status ~ '): '
                ~ ((result.message or '') | string).split() | join(' ') | truncate(300, true)) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if not models -%}{{ return([]) }}{%- endif -%}

    {%- set args = invocation_args_dict -%}
    {%- set given = args.get('select') or [] -%}
    {%- set given = [given] if given is string else given | list -%}
    {#- the window as typed, as text: YAML reads an unquoted date as a date, which JSON has not -#}
    {%- set parameters = {
        'path': 'dbt',
        'invocation_id': invocation_id,
        'start': none if var('start_date', none) is none else var('start_date') | string,
        'end': none if var('end_date', none) is none else var('end_date') | string,
        'select': models if given else none,
        'select_given': given | join(' ') if given else none,
        'full_refresh': flags.FULL_REFRESH or false,
        'target': target.name,
    } -%}
    {%- set command = 'dbt ' ~ flags.WHICH -%}
    {%- set typed_vars = {} -%}
    {%- for name, value in (args.get('vars') or {}).items() if args.get('vars') is mapping -%}
        {%- do typed_vars.update({name: value if value is none or value is string else value | string}) -%}
    {%- endfor -%}
    {%- set command_line = command
        ~ (' --select ' ~ given | join(' ') if given else '')
        ~ (' --full-refresh' if flags.FULL_REFRESH else '')
        ~ (" --vars '" ~ tojson(typed_vars, sort_keys=true) ~ "'" if typed_vars else '') -%}
    {%- if errors or skipped -%}
        {%- set outcome, days = 'failed', [] -%}
        {%- set message = command ~ ': nothing published; ' ~ (errors + (
            [skipped | length ~ ' node(s) skipped'] if skipped else [])) | join('; ') -%}
    {%- else -%}
        {%- set window = refill_window() -%}
        {%- set days = [] -%}
        {%- for offset in range(window.days) -%}
            {%- do days.append(window.start_date + modules.datetime.timedelta(days=offset)) -%}
        {%- endfor -%}
        {%- set outcome = 'succeeded' -%}
        {%- set message = command ~ ' ' ~ window.start_date ~ '..' ~ window.end_date
            ~ ': ' ~ ('kept as preview ' ~ refill_preview_id() if refill_preview_id() is not none
                else 'published ' ~ models | join(', ')) -%}
    {%- endif -%}
    {%- set user = env_var('USER', env_var('USERNAME', '')) -%}
    {%- set host = env_var('HOSTNAME', '') -%}
    {%- set ended_at = modules.datetime.datetime.now(modules.pytz.utc).strftime('%Y-%m-%d %H:%M:%S.%f') -%}
    {%- set values = {
        'run_id': refill_string_literal(invocation_id),
        'command': refill_string_literal(command),
        'command_line': refill_string_literal(command_line),
        'parameters': refill_string_literal(tojson(parameters, sort_keys=true)),
        'user_name': refill_string_literal(user) if user else 'null',
        'host': refill_string_literal(host) if host else 'null',
        'started_at': refill_run_started_at(),
        'ended_at': "timestamp '" ~ ended_at ~ "'",
        'outcome': refill_string_literal(outcome),
        'partitions_touched': refill_date_list(days),
        'message': refill_string_literal(message),
    } -%}
    {%- set columns = [] -%}
    {%- for name, _, _ in refill_ops_columns('run_log') -%}
        {%- do columns.append(values[name] ~ ' as ' ~ name) -%}
    {%- endfor -%}
    {{ return(['insert into ops.run_log select ' ~ columns | join(', ')]) }}
{% endmacro %}
