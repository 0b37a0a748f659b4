{% macro refill_landed_manifests(dataset, window) %}
    {#--
        A query giving the readiness verdict of every day of the window as rows the
        engine parses itself: day, is_ready, reason, part_files, manifest_files,
        manifest_records, exported_at, source_fingerprint. No value from the landing is
        rendered into SQL text: the verdicts arrive as JSON from the readiness rule
        (refill/rules/readiness.py, which validated every field) and from_json types them.
    --#}
    {{ return(adapter.dispatch('refill_landed_manifests', 'refill')(dataset, window)) }}
{% endmacro %}

{% macro default__refill_landed_manifests(dataset, window) %}
    {{ exceptions.raise_compiler_error(
        "refill: reading the landing's manifests is not implemented for adapter " ~ adapter.type()
        ~ "; add a " ~ adapter.type() ~ "__refill_landed_manifests macro") }}
{% endmacro %}

{% macro duckdb__refill_landed_manifests(dataset, window) %}
    {#-- exported_at arrives in its canonical form (YYYY-MM-DDTHH:MM:SS[.ffffff]Z); a
         TIMESTAMP is read the same whatever the session's time zone. --#}
    select
        unnest(
            from_json(
                refill_window_readiness(
                    {{ refill_string_literal(dataset) }},
                    date {{ refill_string_literal(window.start_date) }},
                    date {{ refill_string_literal(window.end_date) }}
                ),
                '[{
                    "day": "DATE",
                    "is_ready": "BOOLEAN",
                    "reason": "VARCHAR",
                    "part_files": ["VARCHAR"],
                    "manifest_files": "BIGINT",
                    "manifest_records": "BIGINT",
                    "exported_at": "TIMESTAMP",
                    "source_fingerprint": "VARCHAR"
                }]'
            ),
            recursive := true
        )
{% endmacro %}

{% macro spark__refill_landed_manifests(dataset, window) %}
    {#-- Spark: the window's verdicts as rows, one per day, from the table
         spark__refill_window_readiness wrote in this build. --#}
    select
        day,
        first(is_ready) as is_ready,
        first(reason) as reason,
        array_sort(collect_list(part_file)) as part_files,
        first(manifest_files) as manifest_files,
        first(manifest_records) as manifest_records,
        cast(first(exported_at) as timestamp) as exported_at,
        first(source_fingerprint) as source_fingerprint
    from {{ refill_spark_readiness_relation(dataset, window) }}
    group by day
{% endmacro %}
