{% macro refill_require_present_inputs() %}
    {#--
        DuckDB, on-run-start of a build or run: every seed and partitioned model a node of
        this command reads, and that this command neither loads nor builds, must be in the
        warehouse. On an empty CI warehouse a slim-CI selection without the parents
        (`state:modified+`), or a test of a model outside the selection that dbt picks
        because it also reads a selected one (`+state:modified+`), would otherwise fail in
        the engine after other nodes ran. Refused in one line naming each input and the
        fix; nothing runs. (Spark registers its seeds after dbt's cache is filled:
        refill_loaded_seed.)
    --#}
    {%- set nodes = graph.get('nodes') or {} -%}
    {%- set present = {} -%}
    {%- set unread_by = {} -%}
    {%- set order = [] -%}
    {%- for unique_id in selected_resources if unique_id in nodes -%}
        {%- set reader = nodes[unique_id] -%}
        {%- set runs = reader.resource_type == 'test' or (reader.resource_type == 'model' and refill_builds(reader)) -%}
        {%- if runs -%}
            {%- for parent_id in reader.depends_on.nodes if parent_id in nodes -%}
                {%- set parent = nodes[parent_id] -%}
                {%- set is_seed = parent.resource_type == 'seed' -%}
                {%- set is_published = parent.resource_type == 'model'
                    and parent.config.materialized == 'partitioned' -%}
                {%- set made_here = parent_id in selected_resources
                    and ((is_seed and flags.WHICH == 'build') or (is_published and refill_builds(parent))) -%}
                {%- if (is_seed or is_published) and not made_here -%}
                    {%- if parent_id not in present -%}
                        {%- set relation = refill_node_relation(parent) -%}
                        {%- set exists = refill_table_exists(relation.schema, relation.identifier) -%}
                        {%- do present.update({parent_id: exists}) -%}
                    {%- endif -%}
                    {%- if not present[parent_id] -%}
                        {%- if parent_id not in unread_by -%}
                            {%- do order.append(parent_id) -%}
                            {%- do unread_by.update({parent_id: []}) -%}
                        {%- endif -%}
                        {%- do unread_by[parent_id].append(reader) -%}
                    {%- endif -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set refusals = [] -%}
    {%- for parent_id in order -%}
        {%- set parent = nodes[parent_id] -%}
        {%- set readers = unread_by[parent_id] -%}
        {%- set models = [] -%}
        {%- for reader in readers if reader.resource_type == 'model' -%}
            {%- set name = reader.alias or reader.name -%}
            {%- if name not in models -%}{%- do models.append(name) -%}{%- endif -%}
        {%- endfor -%}
        {%- if parent.resource_type == 'seed' and models -%}
            {%- do refusals.append(models | join(', ') ~ " reads the seed " ~ parent.name ~ ", which this warehouse has "
                ~ "not loaded; load it first (dbt seed) or select the parents too (--select +state:modified+, or + before the model)") -%}
        {%- elif models -%}
            {%- do refusals.append(models | join(', ') ~ " reads " ~ parent.name ~ ", which this warehouse has not "
                ~ "published and this command does not build; select the parents too (--select "
                ~ "+state:modified+, or + before the model)") -%}
        {%- else -%}
            {%- do refusals.append(readers | length ~ " selected test(s) read " ~ parent.name
                ~ ", which this warehouse does not hold and this command does not build (dbt selects a "
                ~ "test of it because the test also reads a selected node); leave such tests out (--indirect-selection buildable) or select "
                ~ parent.name ~ " too") -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if refusals -%}
        {{ exceptions.raise_compiler_error("refill input: " ~ refusals | join('; ') ~ "; nothing written") }}
    {%- endif -%}
{% endmacro %}
