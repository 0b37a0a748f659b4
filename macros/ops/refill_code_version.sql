{% macro refill_code_version(unique_id=none, seed_contents=none) %}
    {#--
        The code version of a model: a hash over dbt's checksum of the model and of every
        model upstream of it, every seed upstream of it, and the source of every row rule
        (a macro under macros/rules/) those nodes call, and the declaration of every dataset
        upstream of it (vars.refill_datasets). A fix in a staging model or in the
        classification of landed lines changes the version of every mart below it, so
        their partitions show as stale; an edit elsewhere in the repository does not.
        Other macros (audits, ledger, window plumbing) are not in dbt's node checksums: a
        change there that must restate history says so by bumping `code_epoch` in
        dbt_project.yml.

        A seed the model's datasets declare as reference data (meta.refill.reference,
        refill_reference_seeds) counts by its config only (column types and the rest): its
        rows are an input of each day, recorded per day in the ledger's reference
        fingerprint, so a corrected rate makes stale the days that read it, not every day.
        Any other seed counts by the sha256 of its file (dbt's checksum of a seed over
        1 MiB is its path): `seed_contents` (seed id -> sha256) gives
        them: the flows pass the files' keys, the current version; a build passes none and
        reads the keys of the loads it read (ops.seed_loads, refill_loaded_seed_contents).
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set node_id = unique_id or model.unique_id -%}
    {%- set contents = seed_contents if seed_contents is not none else refill_loaded_seed_contents() -%}
    {%- set checksums = refill_upstream_checksums(node_id, [], contents, refill_reference_seeds(node_id)) -%}
    {#- A dataset's declared lines are the rule's code too (refill_lines_rule): a field, key or
        accepted value declared otherwise makes the days below it stale. -#}
    {%- set declared = var('refill_datasets', {}) or {} -%}
    {%- for dataset in refill_upstream_datasets(node_id, []) | unique | sort if dataset in declared -%}
        {%- set meaning = tojson(declared[dataset], sort_keys=true) -%}
        {%- do checksums.append('declaration.' ~ dataset ~ '=' ~ local_md5(meaning)) -%}
    {%- endfor -%}
    {%- set fingerprint = (checksums | sort | join('|')) ~ '|epoch=' ~ var('code_epoch', 1) -%}
    {{ return(local_md5(fingerprint)[:12]) }}
{% endmacro %}

{% macro refill_loaded_seed_contents() %}
    {#-- seed id -> the content key of its latest load (ops.seed_loads; Spark appends a row
         per load), as recorded by refill_record_seed_load. --#}
    {%- set loads = run_query(
        "select seed_id, content_sha256 from (select seed_id, content_sha256, row_number() over"
        ~ " (partition by seed_id order by loaded_at desc) as newest from ops.seed_loads) as loads"
        ~ " where newest = 1") -%}
    {%- set contents = {} -%}
    {%- for seed_id, content in loads.rows -%}{%- do contents.update({seed_id: content}) -%}{%- endfor -%}
    {{ return(contents) }}
{% endmacro %}

{% macro refill_reference_seeds(unique_id) %}
    {#-- The seeds whose rows are an input of each day of the node, not its code: those
         declared as reference data by every dataset the node reads (the sources upstream
         of it, by source name, the landing folder). A node that reads no dataset, or a
         seed one of its datasets does not declare, keeps the seed's content in its code
         version: whatever its day's fingerprint does not cover stays code. --#}
    {%- set datasets = refill_upstream_datasets(unique_id, []) | unique | list -%}
    {%- set declared = [] -%}
    {%- for dataset in datasets -%}
        {%- set reference = refill_dataset_reference(dataset) -%}
        {%- set ids = [] -%}
        {%- for read in reference.reads if read is mapping and read.seed in reference.seeds -%}
            {%- do ids.append(reference.seeds[read.seed].id) -%}
        {%- endfor -%}
        {%- do declared.append(ids) -%}
    {%- endfor -%}
    {%- set common = [] -%}
    {%- for seed_id in (declared[0] if declared else []) if seed_id not in common -%}
        {%- set declaring = [] -%}
        {%- for ids in declared if seed_id in ids -%}{%- do declaring.append(ids) -%}{%- endfor -%}
        {%- if declaring | length == declared | length -%}{%- do common.append(seed_id) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(common) }}
{% endmacro %}

{% macro refill_upstream_datasets(unique_id, seen) %}
    {#-- The landing datasets upstream of a node: the source name of every source it reads,
         directly or through other nodes. --#}
    {%- if unique_id in seen -%}{{ return([]) }}{%- endif -%}
    {%- do seen.append(unique_id) -%}
    {%- if unique_id in graph.sources -%}{{ return([graph.sources[unique_id].source_name]) }}{%- endif -%}
    {%- if unique_id not in graph.nodes -%}{{ return([]) }}{%- endif -%}
    {%- set found = [] -%}
    {%- for parent in graph.nodes[unique_id].depends_on.nodes -%}
        {%- do found.extend(refill_upstream_datasets(parent, seen)) -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}
