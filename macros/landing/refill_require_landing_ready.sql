{% macro refill_require_landing_ready(dataset, window, announce=false) %}
    {#--
        The readiness gate inside dbt. The rule itself lives in refill/rules/readiness.py (one
        home, shared with the Prefect flows); this macro asks it about every day of the
        window and stops the run before anything is written if any day is not ready,
        naming every such day. Returns the verdicts of the days the run reads (one dict per
        day, with the manifest's counts, the part files and the source fingerprint).
        A window the user did not name (no vars: every landed day, refill_window_of_all_landed_days)
        reads its ready days only: the others are left out, and named once when `announce`
        (the on-run-start check, refill_require_ready_inputs). A command that only renders
        SQL (refill_command_renders_only: compile, docs generate) checks nothing: no day.
    --#}
    {%- if not execute or refill_command_renders_only() -%}{{ return([]) }}{%- endif -%}
    {%- set verdicts = refill_window_readiness(dataset, window) -%}
    {%- set ready = [] -%}
    {%- set unready = [] -%}
    {%- for verdict in verdicts -%}
        {%- if verdict.is_ready -%}
            {%- do ready.append(verdict) -%}
        {%- else -%}
            {%- do unready.append(verdict.day ~ ' (' ~ verdict.reason ~ ')') -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if unready and not window.get('ready_days_only') -%}
        {{ exceptions.raise_compiler_error(
            "refill readiness: " ~ unready | length ~ " day(s) of " ~ dataset ~ " not ready, nothing written: "
            ~ unready | join('; ') ~ ". Wait for the export, or choose a window without them.") }}
    {%- endif -%}
    {%- if unready and announce -%}
        {%- do exceptions.warn("refill readiness: " ~ unready | length ~ " day(s) of " ~ dataset
            ~ " not ready, left out of "
            ~ "this run (every landed day, no window given), unpublished: " ~ unready | join('; ')
            ~ ". Build them with --vars once they are ready.") -%}
    {%- endif -%}
    {{ return(ready) }}
{% endmacro %}
