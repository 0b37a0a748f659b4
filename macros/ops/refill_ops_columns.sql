{% macro refill_ops_columns(table_name) %}
    {#--
        The columns of refill's ops tables: their one home for both engines, as
        (name, type, constraint) in DuckDB's types. default__refill_create_ops_relations
        writes them as they are; spark__refill_create_ops_relations maps the types
        (refill_ops_columns_ddl, spark=true) and drops what Spark's parquet cannot hold
        (not null, primary key, default). refill/warehouse/ops.py writes and reads them by name.
    --#}
    {%- set columns = {
        'partition_ledger': [
            ('model_name', 'varchar', 'not null'),
            ('partition_date', 'date', 'not null'),
            ('status', 'varchar', 'not null'),
            ('run_id', 'varchar', 'not null'),
            ('git_commit', 'varchar', 'not null'),
            ('code_version', 'varchar', 'not null'),
            ('source_fingerprint', 'varchar', ''),
            ('rows_written', 'bigint', 'not null'),
            ('source_records', 'bigint', ''),
            ('is_backfill', 'boolean', 'not null'),
            ('window_start', 'date', 'not null'),
            ('window_end', 'date', 'not null'),
            ('published_at', 'timestamp', 'not null'),
            ('reference_fingerprint', 'varchar', ''),
        ],
        'partition_attempts': [
            ('run_id', 'varchar', 'not null'),
            ('command', 'varchar', 'not null'),
            ('partition_date', 'date', 'not null'),
            ('chunk_start', 'date', 'not null'),
            ('chunk_end', 'date', 'not null'),
            ('attempt', 'integer', 'not null'),
            ('outcome', 'varchar', 'not null'),
            ('message', 'varchar', ''),
            ('started_at', 'timestamp', 'not null'),
            ('ended_at', 'timestamp', 'not null'),
            ('failed_step', 'varchar', ''),
        ],
        'run_log': [
            ('run_id', 'varchar', 'not null'),
            ('command', 'varchar', 'not null'),
            ('command_line', 'varchar', 'not null'),
            ('parameters', 'json', ''),
            ('user_name', 'varchar', ''),
            ('host', 'varchar', ''),
            ('started_at', 'timestamp', 'not null'),
            ('ended_at', 'timestamp', ''),
            ('outcome', 'varchar', 'not null'),
            ('partitions_touched', 'date[]', ''),
            ('message', 'varchar', ''),
        ],
        'notification_outbox': [
            ('idempotency_key', 'varchar', 'primary key'),
            ('flow_name', 'varchar', 'not null'),
            ('logical_date', 'date', ''),
            ('outcome', 'varchar', 'not null'),
            ('code_version', 'varchar', ''),
            ('message', 'varchar', 'not null'),
            ('created_at', 'timestamp', 'not null'),
            ('sent_at', 'timestamp', ''),
            ('delivery_attempts', 'integer', 'not null default 0'),
            ('last_error', 'varchar', ''),
            ('claimed_by', 'varchar', ''),
            ('claimed_at', 'timestamp', ''),
        ],
        'seed_loads': [
            ('seed_id', 'varchar', 'not null'),
            ('load_key', 'varchar', ''),
            ('loaded_at', 'timestamp', 'not null'),
            ('content_sha256', 'varchar', ''),
        ],
    } -%}
    {{ return(columns[table_name]) }}
{% endmacro %}

{% macro refill_ops_columns_ddl(table_name, spark=false, last=[]) %}
    {#-- The column list of an ops table's `create table`: DuckDB's as written in
         refill_ops_columns; with `spark`, Spark's types and no constraints, and the columns
         named in `last` (the table's partition columns) moved to the end, where Spark's
         partitioned tables keep them. --#}
    {%- set spark_types = {'varchar': 'string', 'integer': 'int', 'json': 'string', 'date[]': 'array<date>'} -%}
    {%- set columns = refill_ops_columns(table_name) -%}
    {%- set ordered = [] -%}
    {%- for column in columns if column[0] not in last -%}{%- do ordered.append(column) -%}{%- endfor -%}
    {%- for name in last -%}
        {%- for column in columns if column[0] == name -%}{%- do ordered.append(column) -%}{%- endfor -%}
    {%- endfor -%}
    {%- set parts = [] -%}
    {%- for name, type, constraint in ordered -%}
        {%- if spark -%}
            {%- do parts.append(name ~ ' ' ~ spark_types.get(type, type)) -%}
        {%- else -%}
            {%- do parts.append((name ~ ' ' ~ type ~ ' ' ~ constraint) | trim) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(parts | join(', ')) }}
{% endmacro %}
