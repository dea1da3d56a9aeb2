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

{#- Columns as dbt Column objects (dbt-spark's macro returns `describe extended` rows), which
    dbt's own helpers such as snapshot_staging_table (hard_deletes='new_record') expect. -#}
{% macro paimon__get_columns_in_relation(relation) -%}
  {{ return(adapter.get_columns_in_relation(relation)) }}
{%- endmacro %}

{#- persist_docs on a Paimon table: the model's description becomes the table's comment and
    column descriptions the fields' descriptions, by one Paimon schema change (any Paimon
    engine sees them). Views and other tables: dbt-spark's way. -#}
{% macro paimon__persist_docs(relation, model, for_relation, for_columns) -%}
  {%- if relation.type != 'view' and adapter.is_paimon_relation(relation) -%}
    {%- set table_comment = model.description
          if for_relation and config.persist_relation_docs() and model.description else none -%}
    {%- set column_comments = {} -%}
    {%- if for_columns and config.persist_column_docs() and model.columns -%}
      {#-- dbt's check: a documented column the table lacks is a warning, not an error --#}
      {%- set existing = adapter.get_columns_in_relation(relation) | map(attribute='name') | list -%}
      {%- set documented = validate_doc_columns(relation, model.columns, existing) -%}
      {%- for name, column in documented.items() if column.description -%}
        {%- do column_comments.update({column.name or name: column.description}) -%}
      {%- endfor -%}
    {%- endif -%}
    {%- do adapter.paimon_persist_docs(relation, table_comment, column_comments) -%}
  {%- else -%}
    {{ spark__persist_docs(relation, model, for_relation, for_columns) }}
  {%- endif -%}
{%- endmacro %}
