{#- Paimon tables are relations like any other: dropping, renaming or creating a schema also acts
    on the Paimon warehouse. Everything else falls back to dbt-spark's macros. -#}

{% macro paimon__drop_relation(relation) -%}
  {%- if relation.type != 'view' and adapter.is_paimon_relation(relation) -%}
    {%- do adapter.drop_paimon_table(relation) -%}
  {%- else -%}
    {{ spark__drop_relation(relation) }}
  {%- endif -%}
{%- endmacro %}

{% macro paimon__rename_relation(from_relation, to_relation) -%}
  {%- if from_relation.type != 'view' and adapter.is_paimon_relation(from_relation) -%}
    {%- do adapter.rename_paimon_table(from_relation, to_relation) -%}
  {%- else -%}
    {{ spark__rename_relation(from_relation, to_relation) }}
  {%- endif -%}
{%- endmacro %}

{% macro paimon__create_schema(relation) -%}
  {#-- the Paimon database first: it refuses names that are not plain identifiers, before any SQL --#}
  {%- do adapter.create_paimon_database(relation.schema) -%}
  {{ spark__create_schema(relation) }}
{%- endmacro %}

{% macro paimon__drop_schema(relation) -%}
  {%- do adapter.drop_paimon_database(relation.schema) -%}
  {{ spark__drop_schema(relation) }}
{%- endmacro %}
