{#- dbt run-operation remove_orphan_files --args '{model: orders, older_than: "1d", dry_run: true}'
    Deletes files in the table's folder that no snapshot or tag references (left by failed or
    interrupted writes) and that are older than `older_than` (default "1d", so files of a write
    still in progress are never touched). dry_run: list them only.
    Args: model | relation, older_than, dry_run (default false). -#}
{% macro remove_orphan_files(model=none, relation=none, older_than=none, dry_run=false) %}
  {{ return(adapter.dispatch('remove_orphan_files')(model, relation, older_than, dry_run)) }}
{% endmacro %}

{% macro paimon__remove_orphan_files(model, relation, older_than, dry_run) %}
  {%- set target = paimon_operation_relation('remove_orphan_files', model, relation) -%}
  {%- set message = adapter.paimon_remove_orphan_files(target, older_than, dry_run) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}
