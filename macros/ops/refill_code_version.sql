{% macro refill_code_version(unique_id=none) %}
    {#--
        The code version of a model: a hash over dbt's checksum of the model and of every
        node upstream of it (models and seeds), and over the source of every row rule
        (a macro under macros/rules/) those nodes call. A fix in a staging model, in the
        classification of landed lines or in the fx seed changes the version of every
        mart below it, so their partitions show as stale; an edit elsewhere in the
        repository does not. Other macros (audits, ledger, window plumbing) are not in
        dbt's node checksums: a change there that must restate history says so by
        bumping `code_epoch` in dbt_project.yml.
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set checksums = refill_upstream_checksums(unique_id or model.unique_id, []) -%}
    {%- set fingerprint = (checksums | sort | join('|')) ~ '|epoch=' ~ var('code_epoch', 1) -%}
    {{ return(local_md5(fingerprint)[:12]) }}
{% endmacro %}
