{% macro refill_publish(results) %}
    {{ return(adapter.dispatch('refill_publish', 'refill')(results)) }}
{% endmacro %}

{% macro default__refill_publish(results) %}
    {#--
        on-run-end: publish the invocation's chunks, all in one DuckDB transaction, or
        none. Every partitioned model this invocation built (its shadow written and
        audited, its ledger rows staged) is moved into place: its window's partitions
        replaced by the shadow's rows (refill_publish_partitions_sql), its ledger rows
        replaced, and the consumer views of versioned models re-created. If any node of
        the invocation failed, errored or was skipped (a later model's audit, a data
        test), nothing is published. A kill before the commit leaves every relation as
        it was: DuckDB does not replay an uncommitted transaction. The shadows are
        dropped afterwards (they are work tables; a killed run leaves them for the next
        build of the model, which replaces them). The transaction is
        refill_publish_nodes (a preview's publish renders it too); under a preview (var
        refill_preview_id) the chunk is kept, not published (refill_keep_preview).
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set chunk = [] -%}
    {%- set failed = [] -%}
    {%- for result in results if result.node is defined and result.node is not none -%}
        {%- if result.status in ('error', 'fail', 'skipped', 'runtime error', 'partial success') -%}
            {%- do failed.append(result.node.name) -%}
        {%- elif result.node.resource_type == 'model' and result.node.config.materialized == 'partitioned' -%}
            {%- do chunk.append(result.node) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if chunk | length == 0 -%}{{ return('') }}{%- endif -%}
    {%- if failed -%}
        {{ return(refill_drop_shadows(chunk)) }}
    {%- endif -%}

    {%- if refill_preview_id() is not none -%}
        {#-- A preview (refill backfill --preview): the chunk is kept under the preview's
             id, not published; nothing consumers read changes. --#}
        {{ return(refill_keep_preview(chunk)) }}
    {%- endif -%}
    {{ return(refill_publish_nodes(chunk)) }}
{% endmacro %}
