{#- A Paimon primary-key table: each run merges the model's rows into it as ONE Paimon commit,
    with the table's merge engine (deduplicate, first-row, aggregation, partial-update). -#}
{% materialization paimon_pk, adapter='paimon', supported_languages=['sql'] %}
  {{ return(paimon_build_primary_key_model('paimon_pk')) }}
{% endmaterialization %}

{#- partial_update: paimon_pk with merge_engine='partial-update', for wide tables assembled from
    several models (each with its own sequence group). -#}
{% materialization partial_update, adapter='paimon', supported_languages=['sql'] %}
  {{ return(paimon_build_primary_key_model('partial_update')) }}
{% endmaterialization %}

{% macro paimon_build_primary_key_model(materialization) %}
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
  {%- set response = adapter.paimon_build_primary_key_model(
        definition, target_relation, compiled_code, should_full_refresh(),
        config.get('on_schema_change', 'ignore')) -%}
  {%- do store_result('main', response=response) -%}

  {% do persist_docs(target_relation, model) %}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [target_relation]}) }}
{% endmacro %}
