{% test unique_combination(model, columns) %}
    {#-- Fails with one row per combination of `columns` that occurs more than once. --#}
    select
        {{ columns | join(', ') }},
        count(*) as copies
    from {{ model }}
    group by {{ columns | join(', ') }}
    having count(*) > 1
{% endtest %}
