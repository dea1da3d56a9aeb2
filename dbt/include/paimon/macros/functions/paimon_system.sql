{#- Paimon's system tables in a model, a test or `dbt show`:
    `select * from {{ paimon_system(ref('orders'), 'snapshots') }}` reads what Paimon's
    engines show as `orders$snapshots`. Names: snapshots, schemas, options, tags, branches,
    consumers, files, manifests, partitions, buckets, aggregation_fields, statistics (the
    table's metadata) and audit_log, binlog, ro (its data: with row kinds, as arrays, the
    top-level files only). branch='audit' reads a branch's (`orders$branch_audit$snapshots`).
    The relation is a temporary view of this session: use it in table,
    incremental and Python models and in tests, not in persistent views. -#}
{% macro paimon_system(relation, name, branch=none) %}
  {%- if execute -%}
    {{- return(adapter.paimon_system_view(relation, name, branch)) -}}
  {%- endif -%}
  {{- return(relation) -}}
{% endmacro %}
