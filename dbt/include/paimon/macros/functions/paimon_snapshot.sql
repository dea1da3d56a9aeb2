{#- Time travel in a model: `select * from {{ paimon_snapshot(ref('orders'), 3) }}` reads the
    Paimon table as of snapshot 3 (merged like any read). Instead of an id: tag='month_end',
    timestamp='2026-11-01 00:00:00' (the latest snapshot committed at or before it; epoch
    milliseconds work too), watermark=1700000000000 (the earliest snapshot whose watermark is at
    or after it), or version='month_end' (a tag name, 'watermark-<n>', or a snapshot id: Spark's
    VERSION AS OF). branch='audit' reads a branch (its latest snapshot, or the one the other
    arguments name on that branch). The relation is a temporary view of this session: use it in table,
    incremental and Python models, tests and `dbt show`, not in persistent views. -#}
{% macro paimon_snapshot(relation, snapshot_id=none, tag=none, timestamp=none, watermark=none,
                         version=none, branch=none) %}
  {%- if execute -%}
    {{- return(adapter.paimon_snapshot_view(relation, snapshot_id, tag, timestamp, watermark,
                                            version, branch)) -}}
  {%- endif -%}
  {{- return(relation) -}}
{% endmacro %}
