{% macro refill_code_form(text) %}
    {#--
        The meaning of a model's or a macro's text, as the code version hashes it: its
        tokens, without SQL comments (`--`, `/* */`), Jinja comments or layout. A comment,
        an indent, a line break or a space around an operator changes no token; a string
        literal, a quoted identifier, a name, a number or an operator does, and so does
        anything inside a quoted token (a comment marker there is text). Whitespace Jinja
        joins to a tag's output is kept as one space (`a {{ x }}` renders `a 1`, `a{{ x }}`
        `a1`), after what a `-` of a tag or comment trims, as Jinja trims it. A SQL comment
        holding a Jinja tag (`-- depends_on: {{ ref(...) }}`) is kept: Jinja renders it.
        Where the end of a comment is not certain the text is kept as written: a backslash
        that DuckDB and Spark read differently (before a quote), a dollar sign outside a
        quoted token, a nested block comment, a `{% raw %}` block. One home:
        refill_upstream_checksums and refill_rule_checksums hash it, for refill's flows and
        a plain dbt alike.
    --#}
    {%- set jinja_string -%}{% raw %}'(?:[^'\\]|\\[\s\S])*'|"(?:[^"\\]|\\[\s\S])*"{% endraw %}{%- endset -%}
    {%- set jinja_tag -%}
        {% raw %}\{\{(?:{% endraw %}{{ jinja_string }}{% raw %}|[^'"}]|\}(?!\}))*\}\}{% endraw -%}
        {% raw %}|\{%(?:{% endraw %}{{ jinja_string }}{% raw %}|[^'"%]|%(?!\}))*%\}{% endraw %}
    {%- endset -%}
    {#-- First what Jinja removes before any SQL exists (inside a SQL string too, never inside
         a tag): comments, and the whitespace a `-` beside a tag or a comment trims. --#}
    {%- set trimmed_tag -%}
        {% raw %}(?:\s*(?=\{[{%]-))?({% endraw %}{{ jinja_tag }}{% raw %})(?:(?<=-[}%]\})\s*)?{% endraw %}
    {%- endset -%}
    {%- set jinja_comment -%}{% raw %}(?:\s*\{#-|\{#)(?:(?!#\})[\s\S])*?(?:-#\}\s*|#\}){% endraw %}{%- endset -%}
    {%- set rendered = modules.re.sub(trimmed_tag ~ '|' ~ jinja_comment, '\\1', text) -%}
    {#-- A SQL string as DuckDB reads it (a quote doubled) and as Spark does (a backslash
         escapes too): the two must cut the text alike. --#}
    {%- set standard -%}{% raw %}\w*'(?:[^']|'')*'|"(?:[^"]|"")*"{% endraw %}{%- endset -%}
    {%- set escaped -%}{% raw %}\w*'(?:[^'\\]|\\[\s\S]|'')*'|"(?:[^"\\]|\\[\s\S]|"")*"{% endraw %}{%- endset -%}
    {%- set number -%}{% raw %}(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\w*{% endraw %}{%- endset -%}
    {%- set sql_rest -%}
        {% raw %}|`(?:[^`]|``)*`|\$\$[\s\S]*?\$\$|--[^\n]*|/\*[\s\S]*?\*/|\s+|{% endraw %}{{ number }}{% raw %}|\w+{% endraw -%}
        {% raw %}|<=>|->>|!~~\*?|~~[~*]?|<->|<#>|!~\*?|~\*|<=|>=|<>|!=|==|\|\||::|->|=>|\*\*|//(?!\*)|<<|>>|\^@|<@|@>|&&|@@|[\s\S]{% endraw %}
    {%- endset -%}
    {%- set tokens = modules.re.findall(jinja_tag ~ '|' ~ standard ~ sql_rest, rendered) -%}
    {%- if tokens != modules.re.findall(jinja_tag ~ '|' ~ escaped ~ sql_rest, rendered) -%}
        {{ return('text:' ~ text) }}
    {%- endif -%}
    {%- set tag_rest -%}{% raw %}|{% endraw %}{{ number }}{% raw %}|\w+|\*\*|//|==|!=|<=|>=|\S{% endraw %}{%- endset -%}
    {%- set form = [] -%}
    {%- set state = {'separated': false, 'after_tag': false} -%}
    {%- for token in tokens -%}
        {%- set is_comment = token.startswith('--') or token.startswith('/*') -%}
        {%- set holds_jinja = '{{' in token or '{%' in token or '}}' in token or '%}' in token
            or '{#' in token or '#}' in token -%}
        {%- set is_tag = (token.startswith('{{') or token.startswith('{%')) and not is_comment -%}
        {%- if token == '$' or (token.startswith('/*') and '/*' in token[2:]) -%}
            {{ return('text:' ~ text) }}
        {%- elif token.isspace() or (is_comment and not holds_jinja) -%}
            {%- do state.update({'separated': true}) -%}
        {%- else -%}
            {%- if is_tag -%}
                {%- set opening = token[:3] if token[2:3] in ('-', '+') else token[:2] -%}
                {%- set closing = token[-3:] if token[-3:-2] in ('-', '+')
                    and token | length > opening | length + 2 else token[-2:] -%}
                {%- set inner = modules.re.findall(jinja_string ~ tag_rest,
                    token[opening | length:token | length - closing | length]) -%}
                {%- if inner[:1] == ['raw'] -%}{{ return('text:' ~ text) }}{%- endif -%}
                {%- set written = opening ~ ' ' ~ inner | join(' ') ~ ' ' ~ closing -%}
            {%- else -%}
                {%- set written = token -%}
            {%- endif -%}
            {#-- Whitespace beside a tag is joined to its output; between SQL tokens it only
                 separates them, as the tokens themselves do. --#}
            {%- if state.separated and form and (is_tag or state.after_tag) -%}
                {%- do form.append(' ') -%}
            {%- endif -%}
            {%- do form.append(written) -%}
            {%- do state.update({'separated': false, 'after_tag': is_tag}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return('tokens:' ~ tojson(form)) }}
{% endmacro %}
