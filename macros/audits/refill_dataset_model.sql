{% macro refill_dataset_model(kind) %}
    {#-- The staging model of the one landing dataset the model being built reads:
         stg_<dataset>__<kind> (kind: lines, manifests), so an audit or the ledger finds its
         dataset's lines and manifests without naming a dataset. None while parsing (the
         model names its staging models itself, in its SQL or on a `-- depends_on:` line).
         A model that reads several datasets names them in the hook's arguments. --#}
    {%- if not execute -%}{{ return(none) }}{%- endif -%}
    {%- set datasets = refill_upstream_datasets(model.unique_id, []) | unique | sort -%}
    {%- if datasets | length != 1 -%}
        {{ exceptions.raise_compiler_error(
            "refill audit: " ~ model.name ~ " reads " ~ (datasets | length) ~ " landing datasets ("
            ~ (datasets | join(', ') or 'none') ~ "); name the " ~ kind ~ " model its hook reads "
            ~ "(" ~ kind ~ "_model=...), nothing written") }}
    {%- endif -%}
    {{ return('stg_' ~ datasets[0] ~ '__' ~ kind) }}
{% endmacro %}
