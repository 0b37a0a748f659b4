{% macro refill_declared_datasets() %}
    {#-- The datasets whose lines the project declares (vars.refill_datasets, dbt_project.yml),
         sorted by name. --#}
    {%- set declared = var('refill_datasets', {}) or {} -%}
    {%- if declared is not mapping -%}
        {{ exceptions.raise_compiler_error(
            "refill declaration: vars.refill_datasets must map each dataset (its landing folder) to "
            ~ "its declaration; see docs/reference/landing.md, nothing written") }}
    {%- endif -%}
    {{ return(declared.keys() | map('string') | sort) }}
{% endmacro %}

{% macro refill_lines_rule(dataset) %}
    {#--
        The line rule of a dataset, as refill_classify_landed_lines takes it: its
        declaration (vars.refill_datasets.<dataset> in dbt_project.yml, where a dbt user
        looks, and where a dbt unit test still sees it) read and checked here, the one home
        of what a declaration may say, each refusal one line naming the dataset and what to
        fix. Every name and value it lets through is pasted into the rule's SQL, so each is
        checked against a pattern first: field names are lowercase identifiers, JSON keys
        identifiers, accepted values carry no quote or backslash, a time zone is a zone
        name. `accepted_in` names a seed or model by name and gives its relation: through
        ref() while the project is parsed (so the staging model depends on it without a
        `-- depends_on:` line) and in a unit test (whose graph is empty: ref() is its
        fixture), from the graph otherwise (a command computing the lines for another
        node reads it without depending on it).
    --#}
    {%- set re = modules.re -%}
    {%- set where = "refill declaration of " ~ dataset
        ~ " (vars.refill_datasets." ~ dataset ~ ", dbt_project.yml): " -%}
    {%- set known_datasets = refill_declared_datasets() -%}
    {%- if dataset not in known_datasets -%}
        {{ exceptions.raise_compiler_error(
            where ~ "not declared (declared: " ~ (known_datasets | join(', ') or 'none')
            ~ "); see docs/reference/landing.md, nothing written") }}
    {%- endif -%}
    {%- set declared = var('refill_datasets')[dataset] -%}
    {%- if declared is not mapping -%}
        {{ exceptions.raise_compiler_error(where ~ "must be a mapping with fields and key, nothing written") }}
    {%- endif -%}
    {%- set allowed = ['fields', 'key', 'day', 'entity'] -%}
    {%- for name in declared if name not in allowed -%}
        {{ exceptions.raise_compiler_error(
            where ~ "unknown entry '" ~ name ~ "' (a declaration has " ~ allowed | join(', ') ~ "), nothing written") }}
    {%- endfor -%}

    {#- fields, in the order a reason is looked for -#}
    {%- set identifier = '^[a-z_][a-z0-9_]*$' -%}
    {%- set reserved = ['landed_date', 'file_name', 'line_number', 'line_text', 'is_valid_utf8', 'line_json',
        'is_json', 'is_object', 'field_kinds', 'field_texts', 'malformed_reason', 'is_conflicting',
        'first_copy', 'line_status', 'quarantine_reason', 'known'] -%}
    {%- set types = ['string', 'timestamp', 'date', 'integer', 'float', 'boolean'] -%}
    {%- set field_entries = ['name', 'type', 'json_key', 'nullable', 'accepted_values', 'accepted_in'] -%}
    {%- set fields = [] -%}
    {%- set names = [] -%}
    {%- if declared.get('fields') is string or declared.get('fields') is mapping or not declared.get('fields') -%}
        {{ exceptions.raise_compiler_error(
            where ~ "fields must be a list of {name, type}, nothing written") }}
    {%- endif -%}
    {%- for field in declared.fields -%}
        {%- if field is not mapping -%}
            {{ exceptions.raise_compiler_error(
                where ~ "each field is a mapping {name, type, ...}, not '" ~ field ~ "', nothing written") }}
        {%- endif -%}
        {%- set name = field.get('name') | string -%}
        {%- if not re.match(identifier, name) or '__' in name or name in reserved or name in names -%}
            {{ exceptions.raise_compiler_error(
                where ~ "field name '" ~ name ~ "' must be a lowercase identifier without '__', unique, and not one of "
                ~ reserved | join(', ') ~ ", nothing written") }}
        {%- endif -%}
        {%- for entry in field if entry not in field_entries -%}
            {{ exceptions.raise_compiler_error(
                where ~ "field " ~ name ~ ": unknown entry '" ~ entry ~ "' (a field has " ~ field_entries | join(', ')
                ~ "), nothing written") }}
        {%- endfor -%}
        {%- set kind = (field.get('type') or '') | string | lower | replace(' ', '') -%}
        {%- set decimal = re.match('^decimal\\((\\d{1,2}),(\\d{1,2})\\)$', kind) -%}
        {%- if decimal and (decimal.group(2) | int) <= (decimal.group(1) | int) and (decimal.group(1) | int) <= 38 -%}
            {%- set kind = 'decimal(' ~ decimal.group(1) ~ ', ' ~ decimal.group(2) ~ ')' -%}
        {%- elif kind not in types -%}
            {{ exceptions.raise_compiler_error(
                where ~ "field " ~ name ~ ": type '" ~ field.get('type') ~ "' is not one of " ~ types | join(', ')
                ~ ", decimal(p, s), nothing written") }}
        {%- endif -%}
        {%- set json_key = (field.get('json_key') or name) | string -%}
        {%- if not re.match('^[A-Za-z_][A-Za-z0-9_]*$', json_key) -%}
            {{ exceptions.raise_compiler_error(
                where ~ "field " ~ name ~ ": json_key '" ~ json_key
                ~ "' must be an identifier (letters, digits, _), nothing written") }}
        {%- endif -%}
        {%- set nullable = field.get('nullable', false) -%}
        {%- if nullable not in (true, false) -%}
            {{ exceptions.raise_compiler_error(
                where ~ "field " ~ name ~ ": nullable must be true or false, nothing written") }}
        {%- endif -%}
        {%- set rule_field = {'name': name, 'type': kind, 'json_key': json_key, 'nullable': nullable} -%}
        {%- set values = field.get('accepted_values') -%}
        {%- if values is not none -%}
            {%- if kind != 'string' or values is string or values is mapping or not values -%}
                {{ exceptions.raise_compiler_error(
                    where ~ "field " ~ name
                    ~ ": accepted_values is a non-empty list, on a string field, nothing written") }}
            {%- endif -%}
            {%- for value in values if value is not string or not re.match("^[^'\\\\\\x00-\\x1f]*$", value) -%}
                {{ exceptions.raise_compiler_error(
                    where ~ "field " ~ name ~ ": accepted value " ~ value ~ " must be a string without quotes, "
                    ~ "backslashes or control characters, nothing written") }}
            {%- endfor -%}
            {%- do rule_field.update({'accepted_values': values | list}) -%}
        {%- endif -%}
        {%- set accepted_in = field.get('accepted_in') -%}
        {%- if accepted_in is not none -%}
            {%- if accepted_in is not mapping or not re.match(identifier, accepted_in.get('ref') | string)
                or not re.match(identifier, (accepted_in.get('column') or name) | string) -%}
                {{ exceptions.raise_compiler_error(
                    where ~ "field " ~ name ~ ": accepted_in is {ref: <seed or model>, column: <its column>}, "
                    ~ "both lowercase identifiers, nothing written") }}
            {%- endif -%}
            {%- do rule_field.update({'accepted_in': {
                'relation': refill_accepted_relation(accepted_in.ref) | string,
                'column': (accepted_in.get('column') or name) | string}}) -%}
        {%- endif -%}
        {%- do names.append(name) -%}
        {%- do fields.append(rule_field) -%}
    {%- endfor -%}

    {#- the key: the fields whose values name a record within a day -#}
    {%- set key = declared.get('key') -%}
    {%- set key = [key] if key is string else (key or []) | list -%}
    {%- if not key -%}
        {{ exceptions.raise_compiler_error(
            where ~ "key names the field(s) that identify a record in a day (one or more of "
            ~ names | join(', ') ~ "), nothing written") }}
    {%- endif -%}
    {%- for name in key -%}
        {%- set field = (fields | selectattr('name', 'equalto', name) | list | first) if name in names else none -%}
        {%- if field is none or field.nullable or field.type in ('float', 'boolean') -%}
            {{ exceptions.raise_compiler_error(
                where ~ "key field '" ~ name ~ "' must be a declared field, not nullable, and not a float or "
                ~ "boolean, nothing written") }}
        {%- endif -%}
    {%- endfor -%}

    {#- the day: which field must fall on the line's partition day, in which zone -#}
    {%- set day = declared.get('day') -%}
    {%- if day is not none -%}
        {%- set day_field = (fields | selectattr('name', 'equalto', day.get('field')) | list | first)
            if day is mapping and day.get('field') in names else none -%}
        {%- set zone = (day.get('time_zone') or 'UTC') | string if day is mapping else 'UTC' -%}
        {%- if day_field is none or day_field.type not in ('date', 'timestamp') -%}
            {{ exceptions.raise_compiler_error(
                where ~ "day is {field: <a date or timestamp field>, time_zone: <zone, for a timestamp>}, "
                ~ "nothing written") }}
        {%- endif -%}
        {%- if not re.match('^[A-Za-z]+(?:[/_+-][A-Za-z0-9]+)*$', zone)
            or (day_field.type == 'date' and zone != 'UTC') -%}
            {{ exceptions.raise_compiler_error(
                where ~ "day.time_zone '" ~ zone ~ "' must be a zone name (UTC, Europe/Berlin) and goes with a "
                ~ "timestamp field, nothing written") }}
        {%- endif -%}
        {%- if zone != 'UTC' and target.type == 'spark' -%}
            {{ exceptions.raise_compiler_error(
                where ~ "a day in time zone " ~ zone ~ " is not supported on Spark yet (UTC only), nothing written") }}
        {%- endif -%}
        {%- set day = {'field': day_field.name, 'time_zone': zone} -%}
    {%- endif -%}

    {%- set entity = declared.get('entity') -%}
    {%- if entity is not none and not re.match('^[A-Za-z0-9 _-]+$', entity | string) -%}
        {{ exceptions.raise_compiler_error(
            where ~ "entity is a word for one record (letters, digits, spaces), nothing written") }}
    {%- endif -%}
    {{ return({'fields': fields, 'key': key, 'day': day, 'entity': entity}) }}
{% endmacro %}

{% macro refill_accepted_relation(name) %}
    {#-- The relation of the seed or model `name` that an `accepted_in` reads (see refill_lines_rule). --#}
    {%- set nodes = graph.get('nodes') or {} if execute else {} -%}
    {%- for node in nodes.values() if node.resource_type in ('seed', 'model') and node.name == name -%}
        {%- set relation = refill_node_relation(node) -%}
        {{ return(refill_loaded_seed(relation) if node.resource_type == 'seed' else relation) }}
    {%- endfor -%}
    {{ return(ref(name)) }}
{% endmacro %}
