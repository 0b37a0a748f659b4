{% macro refill_with_ctes(ctes, final_select) %}
    {#--
        A query assembled from data: `ctes` is a list of (name, body) pairs, in order,
        `final_select` the statement after them. The keywords, commas and parentheses
        between the parts are literal strings joined here, once, so no mix of parts
        (one CTE, many, or a body that starts or ends with a Jinja comment) can glue two
        tokens together: a CTE list rendered by whitespace control put `with` and
        `files as (` next to each other ("withfiles") when the first optional CTE was
        absent.
    --#}
    {%- if not ctes -%}{{ return(final_select) }}{%- endif -%}
    {%- set parts = [] -%}
    {%- for name, body in ctes -%}
        {%- do parts.append(name ~ ' as (\n' ~ body ~ '\n)') -%}
    {%- endfor -%}
    {{ return('with ' ~ parts | join(',\n\n') ~ '\n\n' ~ final_select) }}
{% endmacro %}
