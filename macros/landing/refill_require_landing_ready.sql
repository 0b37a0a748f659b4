{% macro refill_require_landing_ready(dataset, window) %}
    {#--
        The readiness gate inside dbt. The rule itself lives in refill/rules/readiness.py (one
        home, shared with the Prefect flows); this macro asks it about every day of the
        window and stops the run before anything is written if any day is not ready,
        naming every such day. Returns the verdicts (one dict per day, with the
        manifest's counts, the part files and the source fingerprint).
    --#}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set verdicts = refill_window_readiness(dataset, window) -%}
    {%- set unready = [] -%}
    {%- for verdict in verdicts if not verdict.is_ready -%}
        {%- do unready.append(verdict.day ~ ' (' ~ verdict.reason ~ ')') -%}
    {%- endfor -%}
    {%- if unready -%}
        {{ exceptions.raise_compiler_error(
            "refill readiness: " ~ unready | length ~ " day(s) of " ~ dataset ~ " not ready, nothing written: "
            ~ unready | join('; ') ~ ". Wait for the export, or choose a window without them.") }}
    {%- endif -%}
    {{ return(verdicts) }}
{% endmacro %}
