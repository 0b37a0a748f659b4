{% macro refill_preview_refusal(preview_id, window) %}
    {{ return(adapter.dispatch('refill_preview_refusal', 'refill')(preview_id, window)) }}
{% endmacro %}

{% macro default__refill_preview_refusal(preview_id, window) %}
    {{ return("a restatement preview is published on DuckDB and Spark only") }}
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
    {%- set project = refill_preview_project_facts() -%}
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
                'code_versions', json({{ refill_string_literal(tojson(project.code_versions)) }}),
                'references', json({{ refill_string_literal(tojson(project.references)) }})
            )::varchar,
            {{ refill_date_literal(window.start_date) }},
            {{ refill_date_literal(window.end_date) }}
        )
    {%- endset -%}
    {{ return(run_query(facts).columns[0].values()[0]) }}
{% endmacro %}

{% macro spark__refill_preview_refusal(preview_id, window) %}
    {#--
        Spark: the same question, the same rule (refill.warehouse.preview_store.refusal_now),
        asked of the engine itself as the staging gate asks the readiness rule: a script
        transformation (refill.warehouse.spark_readiness, request `preview`) reads the facts
        this invocation read now (the preview's record and published chunks, the ledger's
        published rows of its window, the project's code versions and reference
        declarations, as JSON in the request's row, never in the command) and the landing
        and seed files as they are, on one of the engine's tasks, and answers the one line
        why, or ''. Called by refill_publish_preview before it writes anything.
    --#}
    {%- if not (refill_table_exists('ops', 'refill_previews')
            and refill_table_exists('ops', 'refill_preview_chunks')) -%}
        {{ return("no preview " ~ preview_id ~ " in this warehouse (published, expired or never made)") }}
    {%- endif -%}
    {%- set project = refill_preview_project_facts() -%}
    {%- set id_literal = refill_string_literal(preview_id) -%}
    {%- set as_json = "to_json(struct(*), map('timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSS',"
        ~ " 'ignoreNullFields', 'false'))" -%}
    {%- set records = run_query("select " ~ as_json ~ " from ops.refill_previews where preview_id = "
        ~ id_literal).columns[0].values() -%}
    {%- set facts = {'preview_id': preview_id, 'record': none, 'published_chunks': [], 'published': [],
        'code_versions': project.code_versions, 'references': project.references} -%}
    {%- if records | length > 0 -%}
        {%- set record = fromjson(records[0]) -%}
        {%- do facts.update({'record': record}) -%}
        {%- for row in run_query("select " ~ as_json ~ " from ops.refill_preview_chunks where preview_id = "
                ~ id_literal).columns[0].values() -%}
            {%- do facts.published_chunks.append(fromjson(row)) -%}
        {%- endfor -%}
        {%- for row in run_query("select " ~ as_json ~ " from (select model_name, partition_date, run_id, code_version"
                ~ " from ops.partition_ledger where status = 'published' and partition_date between "
                ~ refill_date_literal(modules.datetime.date.fromisoformat(record.window_start)) ~ " and "
                ~ refill_date_literal(modules.datetime.date.fromisoformat(record.window_end)) ~ ") as published").columns[0].values() -%}
            {%- do facts.published.append(fromjson(row)) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- set datasets = project.references.keys() | list | sort -%}
    {%- set request = "select 'preview' as kind, " ~ refill_string_literal(tojson(facts)) ~ " as dataset, "
        ~ refill_string_literal(window.start_date.isoformat()) ~ " as start_day, "
        ~ refill_string_literal(window.end_date.isoformat()) ~ " as end_day, "
        ~ refill_string_literal(refill_spark_landing_root(datasets[0]) if datasets else '') ~ " as landing_root" -%}
    {%- set answer = run_query("select payload from (" ~ refill_spark_readiness_transform_sql(request)
        ~ ") as answered").columns[0].values() -%}
    {%- if answer | length != 1 -%}
        {{ return("the engine did not answer whether preview " ~ preview_id ~ " may be published") }}
    {%- endif -%}
    {{ return(fromjson(answer[0]).refusal) }}
{% endmacro %}

{% macro refill_preview_project_facts() %}
    {#-- What the project says now, for a preview's refusal: each partitioned model's code
         version (refill_code_version, as the flows compute them) and what each dataset
         declares its days read of the seeds (refill_dataset_reference): the rule computes
         the days' reference fingerprints from the seed files now, so a rate corrected since
         the preview refuses it. --#}
    {%- set code_versions = {} -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.config.materialized == 'partitioned' -%}
        {%- do code_versions.update({refill_node_relation(node).identifier: refill_code_version(node.unique_id)}) -%}
    {%- endfor -%}
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
    {{ return({'code_versions': code_versions, 'references': references}) }}
{% endmacro %}
