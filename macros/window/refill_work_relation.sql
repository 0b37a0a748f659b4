{% macro refill_work_relation(relation) %}
    {#--
        The one rule of the work tables (staging), which hold whichever window built them
        last: a node reads one as it is only when this command rebuilds it (same window,
        same landing). Otherwise it reads the same rows computed from the landing for its
        own window, readiness gate included, so `dbt show`, `dbt retry`, `dbt test`,
        `dbt build --select fct_payments` and a slim-CI `state:modified+` that leaves
        staging out read their window, never another's. ref() applies it to every read
        (macros/schema/ref.sql); a work table without such a computation is refused.
    --#}
    {%- if not execute or relation is string -%}{{ return(relation) }}{%- endif -%}
    {%- set node = refill_node_of(relation) -%}
    {%- if node is none or node.config.materialized == 'partitioned' or refill_builds(node) -%}
        {{ return(relation) }}
    {%- endif -%}
    {#- A `-- depends_on:` line names a parent for lineage and build order; it reads no rows,
        and a line comment cannot hold a computed query (its second line would be SQL). -#}
    {%- set named = refill_refs_in_depends_on_lines(node.name) -%}
    {%- if named.refs > 0 and named.refs == named.in_depends_on_lines -%}
        {{ return(relation) }}
    {%- elif named.in_depends_on_lines > 0 -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ model.name ~ " reads " ~ node.name ~ " and also names it on a "
            ~ "`-- depends_on:` line, which cannot hold the window's computed rows; write that line "
            ~ "as -- depends_on: {{ refill_lineage_ref('" ~ node.name ~ "') }}, nothing written") }}
    {%- endif -%}
    {#- A dataset's gate and reader (stg_<dataset>__manifests, stg_<dataset>__raw_lines,
        named for the landing source they read) compute for any dataset; the classified
        lines are payments' own rule. -#}
    {%- for source_name, table_name in node.sources -%}
        {%- if node.name == 'stg_' ~ source_name ~ '__manifests' and table_name == 'manifests' -%}
            {{ return('(' ~ refill_window_manifests(source_name) ~ ')') }}
        {%- elif node.name == 'stg_' ~ source_name ~ '__raw_lines' and table_name == 'part_files' -%}
            {{ return('(' ~ refill_window_raw_lines(source_name) ~ ')') }}
        {%- endif -%}
    {%- endfor -%}
    {%- if node.name == 'stg_payments__lines' -%}
        {{ return('(' ~ refill_window_landed_lines() ~ ')') }}
    {%- endif -%}
    {{ exceptions.raise_compiler_error(
        "refill window: " ~ model.name ~ " reads " ~ node.name ~ ", a work table this command does "
        ~ "not rebuild for its window; select it too (--select +" ~ model.name ~ "), nothing written") }}
{% endmacro %}

{% macro refill_refs_in_depends_on_lines(name) %}
    {#-- How often the node being rendered calls ref('<name>') (refill_lineage_ref and
         builtins.ref are other calls), and how many of those calls sit on a
         `-- depends_on:` line, from its SQL as written. --#}
    {%- set raw_code = model.raw_code if model is mapping and model.raw_code is string else '' -%}
    {%- set call = "(?<![\\w.])ref\\(\\s*['\"]" ~ modules.re.escape(name) ~ "['\"]\\s*\\)" -%}
    {{ return({
        'refs': modules.re.findall(call, raw_code) | length,
        'in_depends_on_lines': modules.re.findall('--[ \\t]*depends_on:[^\\n]*' ~ call, raw_code) | length,
    }) }}
{% endmacro %}
