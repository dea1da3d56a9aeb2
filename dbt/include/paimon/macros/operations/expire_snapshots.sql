{#- dbt run-operation expire_snapshots --args '{model: orders, retain_last: 5, older_than: "7d"}'
    Expires snapshots older than `older_than` (default: the table's snapshot.time-retained, 1 h),
    always keeping the newest `retain_last` (default: snapshot.num-retained.min, 10) and at most
    `retain_max` (default: snapshot.num-retained.max); deletes the files only expired snapshots
    used. Files of retained snapshots and tags are never deleted.
    Args: model | relation, retain_last, older_than ("7d", "12h", "30 min"), retain_max,
    max_deletes (most snapshots expired in this call). -#}
{% macro expire_snapshots(model=none, relation=none, retain_last=none, older_than=none,
                          retain_max=none, max_deletes=none) %}
  {{ return(adapter.dispatch('expire_snapshots')(model, relation, retain_last, older_than,
                                                 retain_max, max_deletes)) }}
{% endmacro %}

{% macro paimon__expire_snapshots(model, relation, retain_last, older_than, retain_max, max_deletes) %}
  {%- set target = paimon_operation_relation('expire_snapshots', model, relation) -%}
  {%- set message = adapter.paimon_expire_snapshots(target, retain_last, older_than, retain_max,
                                                    max_deletes) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}
