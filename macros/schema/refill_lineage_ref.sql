{% macro refill_lineage_ref(name) %}
    {#-- dbt's own ref, for a `-- depends_on:` line (a lineage edge and the build order of a
         model read only by hooks): the relation's name, never the computed rows that
         refill_work_relation gives a read, which a comment line could not hold. --#}
    {{ return(builtins.ref(name)) }}
{% endmacro %}
