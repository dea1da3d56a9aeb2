{#- dbt run-operation rollback_invocation --args '{invocation_id: 0a1b...}'
    Undoes one dbt invocation (default: the latest that committed to a Paimon table of this
    warehouse): every table it wrote is rolled back to the snapshot before its first commit
    there. A table someone committed to afterwards, or that the invocation created, is left
    untouched and named, and the operation fails after rolling back the others.
    dry_run: true lists what would happen. dbt prints each command's invocation id in
    target/run_results.json (metadata.invocation_id); paimon_table_info shows it per snapshot. -#}
{% macro rollback_invocation(invocation_id=none, dry_run=false) %}
  {{ return(adapter.dispatch('rollback_invocation')(invocation_id, dry_run)) }}
{% endmacro %}

{% macro paimon__rollback_invocation(invocation_id, dry_run) %}
  {%- set message = adapter.paimon_rollback_invocation(invocation_id, dry_run) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}
