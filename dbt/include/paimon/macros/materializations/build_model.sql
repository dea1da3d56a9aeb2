{#- The one build sequence of every Paimon materialization: validate, pre-hooks, one atomic
    Paimon commit, docs, post-hooks. -#}
{% macro paimon_build_model(materialization, overwrite_partitions=false) %}
  {#-- 1. validate: config against the query's columns, before anything is written --#}
  {%- set definition = adapter.paimon_table_definition(model, materialization, compiled_code) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- if existing_relation is not none and not adapter.is_paimon_relation(existing_relation) -%}
    {#-- a view or plain table of the same name from an earlier materialization --#}
    {{ adapter.drop_relation(existing_relation) }}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}

  {#-- 2. build: one atomic Paimon commit --#}
  {%- set response = adapter.paimon_build_model(
        definition, target_relation, compiled_code, should_full_refresh(),
        config.get('on_schema_change', 'ignore'), overwrite_partitions) -%}
  {%- do store_result('main', response=response) -%}

  {% do persist_docs(target_relation, model) %}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [target_relation]}) }}
{% endmacro %}
