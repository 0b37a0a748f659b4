{% materialization partitioned, default %}
    {#--
        Write and audit one chunk of a partitioned model (write-audit-publish). The
        window's rows go to the model's shadow (refill_shadow_relation), which no
        consumer reads; the post-hooks audit the shadow and stage the chunk's ledger
        rows beside it. Nothing published changes here: refill_publish (on-run-end)
        moves every shadow of the invocation into place in one transaction, or none.
    --#}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set shadow = refill_shadow_relation(this) -%}
    {%- set partition_column = config.require('partition_column') -%}
    {%- set window = refill_window() -%}
    {%- do refill_require_write_window() -%}
    {%- if should_full_refresh() -%}
        {%- do refill_refuse_history_loss(window) -%}
    {%- endif -%}

    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}

    {%- call statement('main') -%}
        create schema if not exists {{ shadow.schema }};
        create or replace table {{ shadow }} as (
            {{ sql }}
        );
    {%- endcall -%}

    {%- do refill_audit_rows_in_window(shadow, partition_column) -%}
    {%- if not should_full_refresh() -%}
        {%- do refill_require_same_columns(shadow, target_relation) -%}
    {%- endif -%}

    {#-- The audits and the ledger rows (refill_record_partitions), on the shadow. --#}
    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {% do adapter.commit() %}
    {{ run_hooks(post_hooks, inside_transaction=False) }}

    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{% materialization partitioned, adapter='spark' %}
    {#--
        Spark: write and audit one chunk of a partitioned model, as the default
        materialization does, into the model's shadow for this chunk (a parquet table
        partitioned like the published one, so both have the same column order; named per
        chunk by spark__refill_shadow_relation). Nothing published changes here:
        spark__refill_publish (on-run-end) moves the invocation's shadows into place.
    --#}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set shadow = refill_shadow_relation(this) -%}
    {%- set partition_column = config.require('partition_column') -%}
    {%- set window = refill_window() -%}
    {%- do refill_require_write_window() -%}
    {%- if should_full_refresh() -%}
        {%- do refill_refuse_history_loss(window) -%}
    {%- endif -%}

    {{ run_hooks(pre_hooks) }}

    {%- do run_query("create schema if not exists " ~ shadow.schema) -%}
    {%- do run_query("drop table if exists " ~ shadow) -%}
    {#-- External at its own folder: the files an earlier run of this chunk left there are
         all replaced (static: a dynamic overwrite would keep the days it does not write). --#}
    {%- call statement('main') -%}
        create table {{ shadow }}
        using parquet
        options (partitionOverwriteMode 'static')
        partitioned by ({{ partition_column }})
        location {{ refill_spark_location(shadow) }}
        as
        {{ sql }}
    {%- endcall -%}
    {%- do adapter.cache_added(shadow) -%}

    {%- do refill_audit_rows_in_window(shadow, partition_column) -%}
    {%- if not should_full_refresh() -%}
        {%- do refill_require_same_columns(shadow, target_relation) -%}
    {%- endif -%}

    {#-- The audits and the chunk's ledger rows (refill_record_partitions), on the shadow. --#}
    {{ run_hooks(post_hooks) }}

    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
