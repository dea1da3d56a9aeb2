{#- dbt run-operation paimon_drop_table --args '{relation: analytics.orders_wide}'
    Drops a Paimon table (all its snapshots and files) and its Spark catalog entry. -#}
{% macro paimon_drop_table(relation) %}
  {%- set schema, identifier = relation.split('.') -%}
  {%- set target = api.Relation.create(schema=schema, identifier=identifier, type='table') -%}
  {%- if not adapter.is_paimon_relation(target) -%}
    {%- do exceptions.raise_compiler_error(relation ~ " is not a Paimon table in this warehouse.") -%}
  {%- endif -%}
  {%- do adapter.drop_paimon_table(target) -%}
  {{ log("Dropped Paimon table " ~ relation, info=True) }}
{% endmacro %}
