{% macro refill_command_writes() %}
    {#-- True for the dbt commands that write partitions (build, run, and retry of them);
         the only ones that need a window. --#}
    {{ return(flags.WHICH in ('build', 'run', 'retry')) }}
{% endmacro %}
