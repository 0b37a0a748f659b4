{% macro refill_preview_refusal(preview_id, window) %}
    {{ return(adapter.dispatch('refill_preview_refusal', 'refill')(preview_id, window)) }}
{% endmacro %}

{% macro default__refill_preview_refusal(preview_id, window) %}
    {{ return("a restatement preview is published on DuckDB only (one transaction per chunk)") }}
{% endmacro %}

{% macro duckdb__refill_preview_refusal(preview_id, window) %}
    {#--
        '' when the window's chunk of preview `preview_id` may be published now, else the
        one line why. The rule is refill.rules.preview.what_changed, asked through the
        plugin's function refill_preview_refusal with what this invocation reads now: the
        preview's record and the chunks already published from it, the ledger's published
        rows of the preview's window, the project's code versions (refill_code_version, as the
        flows compute them) and what its datasets declare they read of the seeds
        (refill_dataset_reference). The function reads the landing and the seed files itself.
        Called by refill_publish_preview before it writes anything.
    --#}
    {%- set recorded = refill_table_exists('ops', 'refill_previews') -%}
    {%- if not (recorded and refill_table_exists('ops', 'refill_preview_chunks')) -%}
        {{ return("no preview " ~ preview_id ~ " in this warehouse (published, expired or never made)") }}
    {%- endif -%}
    {%- set code_versions = {} -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.config.materialized == 'partitioned' -%}
        {%- do code_versions.update({refill_node_relation(node).identifier: refill_code_version(node.unique_id)}) -%}
    {%- endfor -%}
    {#-- what each dataset declares its days read of the seeds: the function computes the
         days' reference fingerprints from the seed files now (a rate corrected since the
         preview refuses it) --#}
    {%- set references = {} -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' -%}
        {%- set meta = {} -%}
        {%- do meta.update(node.meta or {}) -%}
        {%- do meta.update(node.config.meta or {}) -%}
        {%- set declared = meta.get('refill') or {} -%}
        {%- if declared.get('role') == 'facts' and declared.get('dataset') -%}
            {%- do references.update({declared.dataset: refill_dataset_reference(declared.dataset)}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set id_literal = refill_string_literal(preview_id) -%}
    {%- set facts -%}
        select refill_preview_refusal(
            json_object(
                'preview_id', {{ id_literal }},
                'record', (select to_json(r) from ops.refill_previews as r where r.preview_id = {{ id_literal }}),
                'published_chunks', (
                    select coalesce(json_group_array(to_json(c)), '[]')
                    from ops.refill_preview_chunks as c where c.preview_id = {{ id_literal }}
                ),
                'published', (
                    select coalesce(json_group_array(to_json(l)), '[]')
                    from (
                        select model_name, partition_date, run_id, code_version
                        from ops.partition_ledger
                        where status = 'published' and partition_date between
                            (select window_start from ops.refill_previews where preview_id = {{ id_literal }})
                            and (select window_end from ops.refill_previews where preview_id = {{ id_literal }})
                    ) as l
                ),
                'code_versions', json({{ refill_string_literal(tojson(code_versions)) }}),
                'references', json({{ refill_string_literal(tojson(references)) }})
            )::varchar,
            {{ refill_date_literal(window.start_date) }},
            {{ refill_date_literal(window.end_date) }}
        )
    {%- endset -%}
    {{ return(run_query(facts).columns[0].values()[0]) }}
{% endmacro %}
