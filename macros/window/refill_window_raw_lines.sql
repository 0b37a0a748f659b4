{% macro refill_window_raw_lines(dataset) %}
    {#-- A dataset's raw lines model (stg_<dataset>__raw_lines) for the window, computed from the landing for a command
         that does not build it (refill_work_relation): the readiness gate, then every line
         of the part files of the days it admits (none for a command that only renders SQL:
         nothing is opened). --#}
    {%- set verdicts = refill_require_landing_ready(dataset, refill_window()) -%}
    {%- set part_files = [] -%}
    {%- for verdict in verdicts -%}{%- do part_files.extend(verdict.part_files) -%}{%- endfor -%}
    {{ return(refill_read_landed_lines(part_files | sort)) }}
{% endmacro %}
