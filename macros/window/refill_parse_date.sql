{% macro refill_parse_date(name, raw) %}
    {#-- Jinja has no try/except: check the shape and the calendar before parsing, so a bad
         value gets refill's one-line message instead of a Python traceback. --#}
    {%- set text = raw | string | trim -%}
    {%- set match = modules.re.match('^(\\d{4})-(\\d{2})-(\\d{2})$', text) -%}
    {%- if not match -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ name ~ "=" ~ text ~ " is not an ISO date (YYYY-MM-DD)") }}
    {%- endif -%}
    {%- set year, month, day = match.group(1) | int, match.group(2) | int, match.group(3) | int -%}
    {%- if year < 1 or month < 1 or month > 12 or day < 1 -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ name ~ "=" ~ text ~ " is not a calendar date") }}
    {%- endif -%}
    {%- set first_of_month = modules.datetime.date(year, month, 1) -%}
    {%- set first_of_next = (first_of_month + modules.datetime.timedelta(days=32)).replace(day=1) -%}
    {%- if day > (first_of_next - first_of_month).days -%}
        {{ exceptions.raise_compiler_error(
            "refill window: " ~ name ~ "=" ~ text ~ " is not a calendar date") }}
    {%- endif -%}
    {{ return(modules.datetime.date(year, month, day)) }}
{% endmacro %}
