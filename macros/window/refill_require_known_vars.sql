{% macro refill_require_known_vars() %}
    {#--
        Refuses, with one line naming them, vars this project does not read (a typo such as
        `{start: .., end: ..}` would otherwise build without a window, or be refused later
        for a reason that does not name it). First hook of on-run-start, so nothing is
        written, seeds included; refill_window asks too, for the commands without hooks
        (compile, show). The known names are dbt_project.yml's `vars` (a unit test keeps
        this list equal to them).
    --#}
    {%- set known = [
        'start_date', 'end_date', 'max_window_days', 'allow_wide_window', 'refill_run_id',
        'refill_is_backfill', 'refill_seed_key', 'allow_dropping_unlanded_days', 'code_epoch',
        'refill_preview_id', 'refill_datasets',
    ] -%}
    {%- set given = invocation_args_dict.get('vars') or {} -%}
    {%- if given is string -%}{%- set given = fromyaml(given) or {} -%}{%- endif -%}
    {%- set unknown = [] -%}
    {%- for name in given if name not in known -%}{%- do unknown.append(name | string) -%}{%- endfor -%}
    {%- if unknown -%}
        {{ exceptions.raise_compiler_error(
            "refill input: unknown var(s) " ~ unknown | sort | join(', ') ~ "; refill reads "
            ~ known | join(', ') ~ " (a window is start_date and end_date), nothing written") }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
