{% macro refill_require_partitioned_contract() %}
    {#--
        on-run-start, first: refuse the invocation, before anything is written, when a
        partitioned model lacks what makes its publish safe: its audits (post-hooks
        calling a refill_audit_* macro), then its ledger rows (the post-hook
        refill_record_partitions, after the audits, so only an audited chunk is
        recorded). Without the ledger hook a chunk could never be published or shown
        published; without audits it would publish unchecked. One line names every such
        model. Every model of the project, selected or not: a project with such a model
        is wrong whatever a command selects.
    --#}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set refused = [] -%}
    {%- for node in graph.nodes.values()
        if node.resource_type == 'model' and node.config.materialized == 'partitioned' -%}
        {%- set hooks = node.config.get('post-hook', []) | map(attribute='sql') | list -%}
        {%- set ledger_at = [] -%}
        {%- set audits_at = [] -%}
        {%- for hook in hooks -%}
            {%- if modules.re.search('\\brefill_record_partitions\\s*\\(', hook) -%}
                {%- do ledger_at.append(loop.index) -%}
            {%- endif -%}
            {%- if modules.re.search('\\brefill_audit_\\w+\\s*\\(', hook) -%}
                {%- do audits_at.append(loop.index) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- set name = node.alias or node.name -%}
        {%- if not ledger_at -%}
            {%- do refused.append(name ~ ' has no ledger post-hook (refill_record_partitions)') -%}
        {%- elif not audits_at or audits_at | min > ledger_at | min -%}
            {%- do refused.append(
                name ~ ' has no audit post-hook (refill_audit_*) before its ledger post-hook') -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if refused -%}
        {{ exceptions.raise_compiler_error(
            "refill project: partitioned model " ~ refused | join('; partitioned model ')
            ~ "; nothing written. Give it its audits, then refill_record_partitions(), as post-hooks"
            ~ " (see fct_payments).") }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
