{% macro refill_fault_point(point, model=none) %}
    {#--
        The harness's ARMED fault seam (harness/overlay.py copies it over the product's
        inert macro in a temporary copy of the project; the product never ships it).
        Renders `select error('refill fault injected at <point> in <model>');` when the
        env var REFILL_HARNESS_FAULT names this point, else nothing. Its spec, one or
        more separated by commas: <point>[:<model>][@<start>[..<end>]][#<attempts>]
          :<model>    only in that model (e.g. in_audit:fct_daily_revenue_v2): the model
                      being built (`this`), or the one a call site names (an overlay's
                      publish step, which runs outside any model, passes it)
          @<window>   only in the window start..end (a one-day window: @<day>)
          #<attempts> only while the run's attempt at this window is <= attempts. The
                      attempt is 1 + the highest attempt ops.partition_attempts holds
                      for this run id (var refill_run_id) and window: the flows record
                      each attempt after its build, so a retry sees the failed ones.
                      Such a fault stands for a transient failure, so its message says
                      "input/output error" (an I/O hiccup, which refill retries); a
                      fault on every attempt is a deterministic one (not retried).
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set raw = env_var('REFILL_HARNESS_FAULT', '') | trim -%}
    {%- if not raw -%}{{ return('') }}{%- endif -%}
    {%- set model = model or (this.identifier if this is defined and this is not none else 'dbt') -%}
    {%- set start_date = var('start_date', none) ~ '' -%}
    {%- set end_date = var('end_date', none) ~ '' -%}
    {%- for spec in raw.split(',') -%}
        {%- set head_attempts = spec.strip().split('#', 1) -%}
        {%- set head_window = head_attempts[0].split('@', 1) -%}
        {%- set point_model = head_window[0].split(':', 1) -%}
        {%- set applies = point_model[0] == point
            and (point_model | length == 1 or point_model[1] == model) -%}
        {%- if applies and head_window | length == 2 -%}
            {%- set bounds = head_window[1].split('..', 1) -%}
            {%- set applies = bounds[0] == start_date and bounds[-1] == end_date -%}
        {%- endif -%}
        {%- if applies and head_attempts | length == 2 -%}
            {%- set previous = run_query(
                "select coalesce(max(attempt), 0) from ops.partition_attempts"
                ~ " where run_id = " ~ refill_string_literal(refill_run_id())
                ~ " and chunk_start = " ~ refill_string_literal(start_date) ~ "::date"
                ~ " and chunk_end = " ~ refill_string_literal(end_date) ~ "::date").columns[0].values()[0] -%}
            {%- set applies = previous + 1 <= head_attempts[1] | int -%}
        {%- endif -%}
        {%- if applies -%}
            {%- set kind = ' (transient: input/output error)' if head_attempts | length == 2 else '' -%}
            {{ return("select error('refill fault injected at " ~ point ~ " in " ~ model ~ kind ~ "');") }}
        {%- endif -%}
    {%- endfor -%}
    {{ return('') }}
{% endmacro %}
