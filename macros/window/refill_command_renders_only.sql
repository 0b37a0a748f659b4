{% macro refill_command_renders_only() %}
    {#-- True for the dbt commands that only render SQL or list nodes (compile, docs
         generate, ls, parse): they read no data, so they need no ready day and no loaded
         seed, check no readiness and open no landed file. --#}
    {{ return(flags.WHICH in ('compile', 'generate', 'list', 'ls', 'parse')) }}
{% endmacro %}
