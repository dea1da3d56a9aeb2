{#- Tags: named snapshots that snapshot expiry keeps (docs/tags_and_rollback.md).
    Every operation takes model | relation ('schema.table') and the tag's name:
      dbt run-operation create_tag --args '{model: orders, tag: month_end}'
        from the latest snapshot; or snapshot_id: 7; or timestamp: "2026-11-01 00:00:00" (the
        earliest snapshot committed at or after it); time_retained: "30d" makes expire_tags
        delete it after that long; ignore_if_exists: true for an idempotent call.
      dbt run-operation replace_tag --args '{model: orders, tag: month_end, snapshot_id: 9}'
      dbt run-operation rename_tag --args '{model: orders, tag: month_end, new_name: nov}'
      dbt run-operation delete_tag --args '{model: orders, tag: "a,b"}'
      dbt run-operation expire_tags --args '{model: orders, older_than: "90d"}'
        deletes tags past their time_retained, and with older_than (a duration or a
        timestamp) every tag created before it. -#}
{% macro create_tag(tag, model=none, relation=none, snapshot_id=none, timestamp=none,
                    time_retained=none, ignore_if_exists=false) %}
  {{ return(adapter.dispatch('create_tag')(tag, model, relation, snapshot_id, timestamp,
                                           time_retained, ignore_if_exists)) }}
{% endmacro %}

{% macro paimon__create_tag(tag, model, relation, snapshot_id, timestamp, time_retained,
                            ignore_if_exists) %}
  {{ return(paimon_tag_operation('create_tag', model, relation, {
      'tag': tag, 'snapshot_id': snapshot_id, 'timestamp': timestamp,
      'time_retained': time_retained, 'ignore_if_exists': ignore_if_exists})) }}
{% endmacro %}

{% macro replace_tag(tag, model=none, relation=none, snapshot_id=none, time_retained=none) %}
  {{ return(adapter.dispatch('replace_tag')(tag, model, relation, snapshot_id, time_retained)) }}
{% endmacro %}

{% macro paimon__replace_tag(tag, model, relation, snapshot_id, time_retained) %}
  {{ return(paimon_tag_operation('replace_tag', model, relation, {
      'tag': tag, 'snapshot_id': snapshot_id, 'time_retained': time_retained})) }}
{% endmacro %}

{% macro rename_tag(tag, new_name, model=none, relation=none) %}
  {{ return(adapter.dispatch('rename_tag')(tag, new_name, model, relation)) }}
{% endmacro %}

{% macro paimon__rename_tag(tag, new_name, model, relation) %}
  {{ return(paimon_tag_operation('rename_tag', model, relation,
                                 {'tag': tag, 'new_name': new_name})) }}
{% endmacro %}

{% macro delete_tag(tag, model=none, relation=none) %}
  {{ return(adapter.dispatch('delete_tag')(tag, model, relation)) }}
{% endmacro %}

{% macro paimon__delete_tag(tag, model, relation) %}
  {{ return(paimon_tag_operation('delete_tag', model, relation, {'tag': tag})) }}
{% endmacro %}

{% macro expire_tags(model=none, relation=none, older_than=none) %}
  {{ return(adapter.dispatch('expire_tags')(model, relation, older_than)) }}
{% endmacro %}

{% macro paimon__expire_tags(model, relation, older_than) %}
  {{ return(paimon_tag_operation('expire_tags', model, relation, {'older_than': older_than})) }}
{% endmacro %}

{% macro paimon_tag_operation(operation, model, relation, arguments) %}
  {%- set target = paimon_operation_relation(operation, model, relation) -%}
  {%- set message = adapter.paimon_tag_operation(operation, target, arguments) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}
