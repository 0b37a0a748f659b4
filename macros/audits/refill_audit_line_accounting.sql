{% macro refill_audit_line_accounting(lines_model=none, manifests_model=none) %}
    {#-- Post-hook audit of a chunk (its shadow): for every day of the window, published
         rows + duplicate lines + quarantined lines = the manifest's records. Nothing
         landed is lost unseen. --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set lines_model = lines_model or refill_dataset_model('lines') -%}
    {%- set manifests_model = manifests_model or refill_dataset_model('manifests') -%}
    {%- set partition_column = config.require('partition_column') -%}
    {%- set query -%}
        {{ refill_fault_point('in_audit') }}
        with published as (
            select {{ partition_column }} as landed_date, count(*) as published_rows
            from {{ refill_shadow_relation(this) }}
            where {{ refill_window_predicate(partition_column) }}
            group by 1
        ),

        set_aside as (
            select
                landed_date,
                count(*) filter (where line_status = 'duplicate') as duplicate_lines,
                count(*) filter (where line_status = 'quarantined') as quarantined_lines
            from {{ ref(lines_model) }}
            where {{ refill_window_predicate('landed_date') }}
            group by 1
        )

        select
            manifests.landed_date,
            manifests.manifest_records,
            coalesce(published.published_rows, 0) as published_rows,
            coalesce(set_aside.duplicate_lines, 0) as duplicate_lines,
            coalesce(set_aside.quarantined_lines, 0) as quarantined_lines
        from {{ ref(manifests_model) }} as manifests
        left join published on manifests.landed_date = published.landed_date
        left join set_aside on manifests.landed_date = set_aside.landed_date
        where {{ refill_window_predicate('manifests.landed_date') }}
            and coalesce(published.published_rows, 0) + coalesce(set_aside.duplicate_lines, 0)
                + coalesce(set_aside.quarantined_lines, 0) <> manifests.manifest_records
        order by 1
        limit 10
    {%- endset -%}
    {%- set gaps = run_query(query) -%}
    {%- if gaps.rows | length > 0 -%}
        {%- set details = [] -%}
        {%- for row in gaps.rows -%}
            {%- do details.append(row['landed_date'] ~ ' manifest ' ~ row['manifest_records'] ~ ' records vs '
                ~ row['published_rows'] ~ ' published + ' ~ row['duplicate_lines'] ~ ' duplicate + '
                ~ row['quarantined_lines'] ~ ' quarantined') -%}
        {%- endfor -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ this.identifier ~ " loses landed lines: " ~ details | join('; ')
            ~ "; nothing published, the previous data stands") }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
