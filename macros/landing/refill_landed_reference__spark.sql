{% macro spark__refill_landed_reference(dataset, window, declared) %}
    {#-- Spark: the reference fingerprints refill recorded with each day's verdict
         (refill/warehouse/spark_readiness.py computes them in Python, from the seed files),
         checked in this statement against the loads ops.seed_loads records (the latest per
         seed, Spark's sha2 of the file loaded): recorded from other bytes than the
         warehouse holds, the build stops (raise_error), naming the seeds. A day without a
         recorded verdict is refused by the readiness gate. --#}
    {%- set seed_ids = [] -%}
    {%- for read in declared.reads if read is mapping and read.seed in declared.seeds -%}
        {%- if declared.seeds[read.seed].id not in seed_ids -%}
            {%- do seed_ids.append(declared.seeds[read.seed].id) -%}
        {%- endif -%}
    {%- endfor -%}
    with recorded as (
        {{ refill_spark_latest_verdicts_sql([dataset], window) }}
    ),

    by_day as (
        select
            day,
            first(reference_fingerprint) as reference_fingerprint,
            first(seed_contents) as seed_contents
        from recorded
        group by day
    ),

    loads as (
        select
            seed_id,
            content_sha256,
            row_number() over (partition by seed_id order by loaded_at desc) as newest
        from ops.seed_loads
    ),

    loaded as (
        select concat_ws(',', array_sort(collect_list(
            concat(seed_id, '=', coalesce(content_sha256, 'nothing'))))) as seed_contents
        from loads
        where
            newest = 1
            and seed_id in ({%- for seed_id in seed_ids %}{{ refill_string_literal(seed_id) }}{{ ", " if not loop.last }}{%- endfor %}{{ "''" if not seed_ids }})
    )

    select
        by_day.day,
        by_day.reference_fingerprint
    from by_day
    cross join loaded
    where
        case
            when coalesce(by_day.seed_contents, '') = coalesce(loaded.seed_contents, '') then true
            else raise_error(
                'refill reference: ' || {{ refill_string_literal(dataset) }} || ' ' || cast(by_day.day as string)
                || ': the seed files its reference fingerprint was recorded from (' || coalesce(by_day.seed_contents, 'none')
                || ') are not the ones the warehouse loaded (' || coalesce(loaded.seed_contents, 'none')
                || '); load the seeds (`dbt seed`) and record the verdicts again; nothing written'
            )
        end
{% endmacro %}
