{#- Row tracking columns in a model: `select id, _ROW_ID, _SEQUENCE_NUMBER from
    {{ paimon_row_tracking(ref('t')) }}` reads a row-tracking table (config row_tracking=true)
    with Paimon's hidden columns, as Paimon Spark's `SELECT _ROW_ID, ... FROM t`. The relation is
    a temporary view of this session: use it in table, incremental and Python models, tests and
    `dbt show`, not in persistent views. -#}
{% macro paimon_row_tracking(relation) %}
  {%- if execute -%}
    {{- return(adapter.paimon_row_tracking_view(relation)) -}}
  {%- endif -%}
  {{- return(relation) -}}
{% endmacro %}
