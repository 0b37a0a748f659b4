{% macro refill_string_literal(value) %}
    {#--
        The one way a value from outside the project (a manifest field, a file or folder
        name, a var, an env var) becomes SQL text: a quoted string literal whose quotes
        are escaped for the engine, so the value can only ever be a value. Prefer data
        the engine reads itself or a typed literal built from a parsed value (a date
        from refill_window); use this for the rest. Never paste such a value between
        quotes by hand.
    --#}
    {{ return(adapter.dispatch('refill_string_literal', 'refill')(value)) }}
{% endmacro %}

{% macro default__refill_string_literal(value) %}
    {#-- Standard SQL (DuckDB, Postgres): a quote inside the literal is written twice;
         a backslash is an ordinary character. NUL cannot be in a SQL string at all. --#}
    {%- set text = value | string -%}
    {%- if '\x00' in text -%}
        {{ exceptions.raise_compiler_error("refill input: a value holds a NUL character and cannot be used in SQL") }}
    {%- endif -%}
    {{ return("'" ~ text | replace("'", "''") ~ "'") }}
{% endmacro %}

{% macro spark__refill_string_literal(value) %}
    {#-- Spark SQL reads backslash escapes inside string literals: escape the backslash
         first, then the quote. --#}
    {%- set text = value | string -%}
    {%- if '\x00' in text -%}
        {{ exceptions.raise_compiler_error("refill input: a value holds a NUL character and cannot be used in SQL") }}
    {%- endif -%}
    {{ return("'" ~ text | replace('\\', '\\\\') | replace("'", "\\'") ~ "'") }}
{% endmacro %}
