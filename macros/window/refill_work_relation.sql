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
    {#- A dataset's gate, reader and classified lines (stg_<dataset>__manifests,
        stg_<dataset>__raw_lines, stg_<dataset>__lines, named for the landing source they
        read and its declaration) compute for any dataset. -#}
    {%- set computed = namespace(sql=none) -%}
    {%- for source_name, table_name in node.sources -%}
        {%- if node.name == 'stg_' ~ source_name ~ '__manifests' and table_name == 'manifests' -%}
            {%- set computed.sql = refill_window_manifests(source_name) -%}
        {%- elif node.name == 'stg_' ~ source_name ~ '__raw_lines' and table_name == 'part_files' -%}
            {%- set computed.sql = refill_window_raw_lines(source_name) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for dataset in refill_declared_datasets() if node.name == 'stg_' ~ dataset ~ '__lines' -%}
        {%- set computed.sql = refill_window_landed_lines(dataset) -%}
    {%- endfor -%}
    {%- if computed.sql is none -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ model.name ~ " reads " ~ node.name ~ ", a work table this command does "
            ~ "not rebuild for its window; select it too (--select +" ~ model.name ~ "), nothing written") }}
    {%- endif -%}
    {#- ref() on a `-- depends_on:` line renders these computed rows into a line comment
        (its second line would be SQL), and the same ref() in a hook (the ledger's read of
        the manifests) must get them: such a line is refused, never left stale. -#}
    {%- if refill_refs_in_depends_on_lines(node.name) > 0 -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ model.name ~ " reads " ~ node.name ~ " and also names it on a "
            ~ "`-- depends_on:` line, which cannot hold the window's computed rows; write that line "
            ~ "as -- depends_on: {{ refill_lineage_ref('" ~ node.name ~ "') }}, nothing written") }}
    {%- endif -%}
    {{ return('(' ~ computed.sql ~ ')') }}
{% endmacro %}

{% macro refill_refs_in_depends_on_lines(name) %}
    {#-- How many of the node being rendered's ref() calls of <name> sit on a `-- depends_on:`
         line, from its SQL as written (refill_lineage_ref and builtins.ref are other calls):
         ref('<name>'), with a package first (ref('<package>', '<name>')) or a version after
         (ref('<name>', v=1)), either quote. --#}
    {%- set raw_code = model.raw_code if model is mapping and model.raw_code is string else '' -%}
    {%- set call = "(?<![\\w.])ref\\(\\s*(?:['\"][^'\"]*['\"]\\s*,\\s*)?['\"]" ~ modules.re.escape(name)
        ~ "['\"]\\s*(?:,[^)]*)?\\)" -%}
    {{ return(modules.re.findall('--[ \\t]*depends_on:[^\\n]*' ~ call, raw_code) | length) }}
{% endmacro %}
