{% macro refill_landing_datasets_read() %}
    {#--
        The landing datasets this invocation reads through the readiness gate, sorted: those
        whose manifests model (stg_<dataset>__manifests, reading source <dataset>.manifests)
        a selected node builds, or reads through work tables it does not build (whose rows
        are computed from the landing, refill_work_relation). A partitioned model read but
        not built is its published table: nothing upstream of it is read. `dbt retry` names
        no selection: every node counts.
    --#}
    {%- if not execute -%}{{ return([]) }}{%- endif -%}
    {%- set nodes = graph.get('nodes') or {} -%}
    {%- set selected = selected_resources | list if selected_resources | length > 0 else nodes.keys() | list -%}
    {%- set queue = [] -%}
    {%- set seen = {} -%}
    {%- for unique_id in selected if unique_id in nodes and nodes[unique_id].resource_type in ('model', 'test') -%}
        {%- do queue.append(unique_id) -%}
        {%- do seen.update({unique_id: true}) -%}
    {%- endfor -%}
    {%- set datasets = [] -%}
    {#- a breadth-first walk: the loop reaches what it appends -#}
    {%- for unique_id in queue -%}
        {%- set node = nodes[unique_id] -%}
        {%- if node.resource_type == 'model' -%}
            {%- for source_name, table_name in node.sources -%}
                {%- if node.name == 'stg_' ~ source_name ~ '__manifests' and table_name == 'manifests'
                    and source_name not in datasets -%}
                    {%- do datasets.append(source_name) -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
        {%- set reads_published = node.resource_type == 'model' and node.config.materialized == 'partitioned'
            and not refill_builds(node) -%}
        {%- if node.resource_type in ('model', 'test') and not reads_published -%}
            {%- for parent in node.depends_on.nodes if parent in nodes and parent not in seen -%}
                {%- do seen.update({parent: true}) -%}
                {%- do queue.append(parent) -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(datasets | sort) }}
{% endmacro %}
