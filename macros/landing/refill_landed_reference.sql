{% macro refill_landed_reference(dataset, window) %}
    {#--
        A query giving, for every day of the window, the day's reference fingerprint (what
        the day reads of the seeds, as the dataset declares it: refill/rules/reference.py,
        the one home of its meaning). Computed from the seed files' bytes, checked in the
        same statement against the loads ops.seed_loads records: a file that is not the one
        the warehouse loaded stops the build (`refill reference: ...`), or the ledger would
        name rates the rows do not hold. The model calling it must depend on every seed
        declared, so a `dbt build` loads them before it.
    --#}
    {%- set declared = refill_dataset_reference(dataset) -%}
    {%- if execute -%}
        {%- for read in declared.reads -%}
            {%- set seed = declared.seeds.get(read.seed) if read is mapping else none -%}
            {%- if seed and seed.id not in model.depends_on.nodes -%}
                {{ exceptions.raise_compiler_error(
                    "refill project: " ~ model.name ~ " records what " ~ dataset ~ " reads of seed "
                    ~ read.seed ~ " but does not depend on it; add `-- depends_on: {{ ref('"
                    ~ read.seed ~ "') }}` so a build loads the seed before it") }}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(adapter.dispatch('refill_landed_reference', 'refill')(dataset, window, declared)) }}
{% endmacro %}

{% macro default__refill_landed_reference(dataset, window, declared) %}
    {{ exceptions.raise_compiler_error(
        "refill: reading the seeds' reference fingerprints is not implemented for adapter " ~ adapter.type()
        ~ "; add a " ~ adapter.type() ~ "__refill_landed_reference macro") }}
{% endmacro %}

{% macro duckdb__refill_landed_reference(dataset, window, declared) %}
    {#-- The plugin's refill_window_reference reads each seed file once, checks its sha256
         against the load recorded in ops.seed_loads (read by this statement; it raises
         otherwise) and gives the fingerprints of the same bytes. --#}
    select
        unnest(
            from_json(
                refill_window_reference(
                    {{ refill_string_literal(tojson(declared)) }},
                    (
                        select coalesce(json_group_object(seed_id, content_sha256), '{}')::varchar
                        from ops.seed_loads
                    ),
                    date {{ refill_string_literal(window.start_date) }},
                    date {{ refill_string_literal(window.end_date) }}
                ),
                '[{"day": "DATE", "reference_fingerprint": "VARCHAR"}]'
            ),
            recursive := true
        )
{% endmacro %}

{% macro refill_dataset_reference(dataset) %}
    {#-- What `dataset` declares its days read of the seeds (its facts model's
         meta.refill.reference, as written), the model that declares it, and every seed's
         id and file (absolute: the engine opens it, not dbt; refill_project_path): data
         for refill/rules/reference.py, which gives it its meaning. A file whose path was
         made absolute from $PWD (dbt's project dir relative) carries the sha256 dbt took of
         its text when it parsed it (none over dbt's 1 MiB limit, where dbt keeps the
         path): the rule refuses other bytes, so a $PWD that is not dbt's working
         directory is never read from. (refill's own runs give dbt an absolute project dir,
         and may build on a manifest parsed before a seed was corrected.) --#}
    {%- set found = {'dataset': dataset, 'model': none, 'reads': [], 'seeds': {}} -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' -%}
        {%- set meta = {} -%}
        {%- do meta.update(node.meta or {}) -%}
        {%- do meta.update(node.config.meta or {}) -%}
        {%- set declared = meta.get('refill') or {} -%}
        {%- if declared.get('role') == 'facts' and declared.get('dataset') == dataset -%}
            {%- do found.update({'model': node.name, 'reads': declared.get('reference') or []}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set project_dir = (invocation_args_dict.get('project_dir') or '') | string -%}
    {%- set from_pwd = not project_dir.startswith('/') -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'seed' -%}
        {%- do found.seeds.update({node.name: {
            'id': node.unique_id,
            'file': refill_project_path(node.original_file_path) if node.package_name == project_name
                else refill_project_path(refill_seed_file(node), relative_to='dbt'),
            'parsed_sha256': node.checksum.checksum if from_pwd and node.checksum.name == 'sha256' else none}}) -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}

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
