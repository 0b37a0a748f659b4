{% macro refill_require_inputs_built() %}
    {#--
        A partitioned model reads published partitioned models, seeds, and work tables
        (staging) that hold one window only: whichever window built them last. So every
        work table it reads must be rebuilt by this same command, for this window
        (readiness included), or the model would publish another window's lines. Refuses
        with one line otherwise (a plain `dbt build --select fct_payments`).
    --#}
    {%- set missing = [] -%}
    {%- for parent_id in model.depends_on.nodes -%}
        {%- set parent = graph.nodes.get(parent_id) -%}
        {%- if parent is not none and parent.resource_type == 'model'
            and parent.config.materialized != 'partitioned' and not refill_builds(parent) -%}
            {%- do missing.append(parent.name) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if missing -%}
        {%- set window = refill_window() -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ this.identifier ~ " reads " ~ missing | sort | join(', ')
            ~ ", work table(s) this command does not rebuild for " ~ window.start_date ~ ".." ~ window.end_date
            ~ "; select them too (--select +" ~ model.name ~ "), nothing written") }}
    {%- endif -%}
{% endmacro %}
