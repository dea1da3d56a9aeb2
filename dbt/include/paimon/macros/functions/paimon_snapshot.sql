{#- Time travel in a model: `select * from {{ paimon_snapshot(ref('orders'), 3) }}` reads the
    Paimon table as of snapshot 3 (merged like any read). The relation is a temporary view of
    this session: use it in table, incremental and Python models, not in persistent views. -#}
{% macro paimon_snapshot(relation, snapshot_id) %}
  {%- if execute -%}
    {{- return(adapter.paimon_snapshot_view(relation, snapshot_id)) -}}
  {%- endif -%}
  {{- return(relation) -}}
{% endmacro %}
