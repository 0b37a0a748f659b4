{% macro spark__refill_landed_reference(dataset, window, declared) %}
    {#-- Spark: the reference fingerprints computed by the engine itself, as the readiness
         verdicts are (refill/warehouse/spark_readiness.py as a script transformation: the
         rule in refill/rules/reference.py, from the seed files' bytes, no translation),
         with the sha256 of the seed files they were computed from, checked in this
         statement against the loads ops.seed_loads records (the latest per seed, Spark's
         sha2 of the file loaded): computed from other bytes than the warehouse holds, or
         from a declaration or a file that cannot be read, the build stops (raise_error). --#}
    {%- set seed_ids = [] -%}
    {%- for read in declared.reads if read is mapping and read.seed in declared.seeds -%}
        {%- if declared.seeds[read.seed].id not in seed_ids -%}
            {%- do seed_ids.append(declared.seeds[read.seed].id) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set request = "select 'reference' as kind, " ~ refill_string_literal(tojson(declared)) ~ " as dataset, "
        ~ refill_string_literal(window.start_date.isoformat()) ~ " as start_day, "
        ~ refill_string_literal(window.end_date.isoformat()) ~ " as end_day, '' as landing_root" -%}
    with answers as (
        select
            to_date(answered.day) as day,
            from_json(answered.payload, 'reference_fingerprint string, seed_contents string, error string') as answer
        from ({{ refill_spark_readiness_transform_sql(request) }}) as answered
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
        answers.day,
        answers.answer.reference_fingerprint
    from answers
    cross join loaded
    where
        case
            when answers.answer.error is not null then raise_error(
                'refill reference: ' || {{ refill_string_literal(dataset) }} || ': ' || answers.answer.error
            )
            when coalesce(answers.answer.seed_contents, '') = coalesce(loaded.seed_contents, '') then true
            else raise_error(
                'refill reference: ' || {{ refill_string_literal(dataset) }} || ' ' || cast(answers.day as string)
                || ': the seed files its reference fingerprint was computed from (' || coalesce(answers.answer.seed_contents, 'none')
                || ') are not the ones the warehouse loaded (' || coalesce(loaded.seed_contents, 'none')
                || '); load the seeds (`dbt seed`, or a build that selects them; refill''s commands load them); nothing written'
            )
        end
{% endmacro %}
