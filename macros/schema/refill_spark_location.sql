{% macro refill_spark_location(relation) %}
    {#-- Spark: the folder of `relation`, where Spark itself would put a managed table
         (<spark.sql.warehouse.dir>/<schema>.db/<name>), as a string literal. Every table
         refill writes on Spark is external at this folder, so a new process (the catalog is
         in memory) registers it again from there, and a rebuild replaces its files. --#}
    {%- if not execute -%}{{ return("''") }}{%- endif -%}
    {%- set warehouse_dir = refill_spark_warehouse_dir() -%}
    {{ return(refill_string_literal(
        warehouse_dir ~ '/' ~ relation.schema ~ '.db/' ~ relation.identifier)) }}
{% endmacro %}

{% macro refill_spark_warehouse_dir() %}
    {#-- Spark: the folder that holds every table's folder (spark.sql.warehouse.dir), as
         the engine holds it: absolute (a URI or an absolute path), or a table would be
         written wherever the process that opens it runs. Spark qualifies the setting when a
         session starts (on `spark` against dbt's working directory, so a relative
         REFILL_SPARK_WAREHOUSE is not the project's: profiles.yml); a value still relative
         is refused in one line. --#}
    {%- set warehouse_dir = run_query("set spark.sql.warehouse.dir").columns[1].values()[0] | string -%}
    {%- if not warehouse_dir.startswith('/') and not modules.re.match('[A-Za-z][A-Za-z0-9+.-]*:/', warehouse_dir) -%}
        {{ exceptions.raise_compiler_error(
            "refill input: the Spark warehouse folder " ~ tojson(warehouse_dir) ~ " (spark.sql.warehouse.dir) is a"
            ~ " relative path; give REFILL_SPARK_WAREHOUSE, or the cluster's setting, an absolute path") }}
    {%- endif -%}
    {{ return(warehouse_dir) }}
{% endmacro %}

{% macro refill_spark_is_work_table() %}
    {#-- A work table: a model dbt materializes as a plain table (staging: the window's
         landed lines, rebuilt every run), not a published model (partitioned), a seed,
         the ledger or an ops relation (those are created by refill's own macros). --#}
    {{ return(execute and model is defined and model.resource_type == 'model'
        and config.get('materialized') == 'table') }}
{% endmacro %}

{% macro refill_spark_work_location(relation, days=none) %}
    {#-- Spark: a work table's folder private to the window being built,
         <table folder>/<first day>_<last day>. Each process has its own catalog, so only
         the folder is shared: two chunks built at once (never over the same day) would
         otherwise replace each other's files under one folder and fail reading them
         (FILE_NOT_EXIST). The days come from refill_window (validated dates, formatted
         here, never the raw vars). A rebuild of the same window replaces its files.
         `days`: another window's `<first day>_<last day>` (the janitor's, from a name it
         matched). --#}
    {%- if not execute -%}{{ return("''") }}{%- endif -%}
    {%- if days is none -%}
        {%- set window = refill_window() -%}
        {%- set days = window.start_date.strftime('%Y%m%d') ~ '_' ~ window.end_date.strftime('%Y%m%d') -%}
    {%- endif -%}
    {%- set warehouse_dir = refill_spark_warehouse_dir() -%}
    {{ return(refill_string_literal(
        warehouse_dir ~ '/' ~ relation.schema ~ '.db/' ~ relation.identifier ~ '/' ~ days)) }}
{% endmacro %}

{% macro refill_spark_register(relation, columns=none, partitioned_by=none) %}
    {#-- Spark: make `relation` known to this process's catalog and to dbt's relation cache
         (filled before on-run-start: a table it does not know, dbt would try to create).
         `columns` (DDL) when its folder may not exist yet; without them the columns and
         the partitions are read from the files. Partitioned tables replace only the days
         present in the rows they are given, whatever the session says (the table option). --#}
    {%- do run_query("create schema if not exists " ~ relation.schema) -%}
    {%- do run_query(
        "create table if not exists " ~ relation
        ~ ((" (" ~ columns ~ ")") if columns else "")
        ~ " using parquet options (partitionOverwriteMode 'dynamic')"
        ~ ((" partitioned by (" ~ partitioned_by ~ ")") if partitioned_by and columns else "")
        ~ " location " ~ refill_spark_location(relation)) -%}
    {%- do adapter.cache_added(relation.incorporate(type='table')) -%}
{% endmacro %}
