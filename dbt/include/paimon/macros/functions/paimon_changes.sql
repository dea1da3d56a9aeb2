{#- Incremental consumption: `select * from {{ paimon_changes(ref('orders')) }}` reads the rows of
    the Paimon table that changed since this model's last successful run, with a `_row_kind`
    column (+I, -U, +U, -D): changelog files when the table has a changelog producer, else the
    rows each commit wrote. The first run (the model's relation does not exist yet, or
    --full-refresh) reads every current row as +I. The position is the table's Paimon consumer
    `dbt-<schema>.<model>` (or `consumer_id`), moved only when this model's run succeeds.
    A temporary view of this session: use it in table, incremental and Python models. -#}
{% macro paimon_changes(relation, consumer_id=none) %}
  {%- if execute -%}
    {%- set existing = adapter.get_relation(this.database, this.schema, this.identifier) -%}
    {%- set from_start = should_full_refresh() or existing is none -%}
    {{- return(adapter.paimon_changes_view(relation, model.unique_id, this, from_start, consumer_id)) -}}
  {%- endif -%}
  {{- return(relation) -}}
{% endmacro %}
