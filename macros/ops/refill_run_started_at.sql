{% macro refill_run_started_at() %}
    {#-- When this dbt invocation started, as a timestamp literal: when something was
         published, loaded or switched, never which day it belongs to. Kept to the
         microsecond so that two invocations in the same second (back-to-back chunks of a
         backfill) are still ordered as they ran. --#}
    {{ return("timestamp '" ~ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") ~ "'") }}
{% endmacro %}
