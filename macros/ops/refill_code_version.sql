{% macro refill_code_version(unique_id=none, seed_contents=none) %}
    {#--
        The code version of a model: a hash over dbt's checksum of the model and of every
        model upstream of it, the content key of every seed upstream of it, and the source
        of every row rule (a macro under macros/rules/) those nodes call. A fix in a
        staging model, in the classification of landed lines or in the fx seed changes the
        version of every mart below it, so their partitions show as stale; an edit
        elsewhere in the repository does not. Other macros (audits, ledger, window
        plumbing) are not in dbt's node checksums: a change there that must restate history
        says so by bumping `code_epoch` in dbt_project.yml.

        A seed counts by the sha256 of its file (dbt's checksum of a seed over 1 MiB is its
        path: a corrected rate there changed nothing). `seed_contents`
        (seed id -> sha256) gives them: the flows pass the files' keys, the current version;
        a build passes none and reads the keys of the loads it read (ops.seed_loads,
        refill_loaded_seed_contents), so a ledger row names the rates its rows were built
        with, and a mart built from a seed table older than its file shows as stale.
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set contents = seed_contents if seed_contents is not none else refill_loaded_seed_contents() -%}
    {%- set checksums = refill_upstream_checksums(unique_id or model.unique_id, [], contents) -%}
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
