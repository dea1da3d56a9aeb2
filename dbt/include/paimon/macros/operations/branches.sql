{#- Branches: another line of snapshots of the table (docs/tags_and_rollback.md#branches).
      dbt run-operation create_branch --args '{model: orders, branch: audit}'            empty, main's schema
      dbt run-operation create_branch --args '{model: orders, branch: audit, tag: month_end}'
      dbt run-operation fast_forward --args '{model: orders, branch: audit}'             main becomes the branch
        (refused when main has commits made after the branch started, unless force: true)
      dbt run-operation delete_branch --args '{model: orders, branch: audit}'
    Read a branch with paimon_snapshot(ref('orders'), branch='audit'). -#}
{% macro create_branch(branch, model=none, relation=none, tag=none, ignore_if_exists=false) %}
  {{ return(adapter.dispatch('create_branch')(branch, model, relation, tag, ignore_if_exists)) }}
{% endmacro %}

{% macro paimon__create_branch(branch, model, relation, tag, ignore_if_exists) %}
  {{ return(paimon_branch_operation('create_branch', model, relation, {
      'branch': branch, 'tag': tag, 'ignore_if_exists': ignore_if_exists})) }}
{% endmacro %}

{% macro delete_branch(branch, model=none, relation=none) %}
  {{ return(adapter.dispatch('delete_branch')(branch, model, relation)) }}
{% endmacro %}

{% macro paimon__delete_branch(branch, model, relation) %}
  {{ return(paimon_branch_operation('delete_branch', model, relation, {'branch': branch})) }}
{% endmacro %}

{% macro fast_forward(branch, model=none, relation=none, force=false) %}
  {{ return(adapter.dispatch('fast_forward')(branch, model, relation, force)) }}
{% endmacro %}

{% macro paimon__fast_forward(branch, model, relation, force) %}
  {{ return(paimon_branch_operation('fast_forward', model, relation,
                                    {'branch': branch, 'force': force})) }}
{% endmacro %}

{% macro paimon_branch_operation(operation, model, relation, arguments) %}
  {%- set target = paimon_operation_relation(operation, model, relation) -%}
  {%- set message = adapter.paimon_branch_operation(operation, target, arguments) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}

{#- dbt run-operation publish_branch --args '{branch: audit}'
    The publish step of write-audit-publish: main of every Paimon table of the warehouse that
    has branch `audit` becomes that branch (fast_forward), then the branches are deleted
    (delete: false keeps them). Build and test on the branch first with
    `dbt build --vars '{paimon_branch: audit}'`. A table whose main moved since its branch
    started is refused, and nothing is published (force: true replaces main's later commits). -#}
{% macro publish_branch(branch, delete=true, force=false) %}
  {{ return(adapter.dispatch('publish_branch')(branch, delete, force)) }}
{% endmacro %}

{% macro paimon__publish_branch(branch, delete, force) %}
  {%- set message = adapter.paimon_publish_branch(branch, delete, force) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}
