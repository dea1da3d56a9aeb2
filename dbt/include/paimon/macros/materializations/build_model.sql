{#- The one build sequence of every Paimon materialization: validate, pre-hooks, one atomic
    Paimon commit, docs, post-hooks. -#}
{% macro paimon_build_model(materialization, overwrite_partitions=false) %}
  {#-- 1. validate: contract and config against the query's columns, before anything is written --#}
  {%- if config.get('contract').enforced -%}
    {{ paimon_check_contract(compiled_code) }}
  {%- endif -%}
  {%- set definition = adapter.paimon_table_definition(model, materialization, compiled_code) -%}
  {%- set target_relation = adapter.paimon_target_relation(definition, this) -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- if definition.target and existing_relation is not none and existing_relation.type != 'view' -%}
    {%- do exceptions.raise_compiler_error(
        "Model '" ~ model.name ~ "' writes into the shared table " ~ target_relation ~ " (config "
        ~ "`target`), but " ~ this ~ " is still a table from an earlier configuration. Drop it "
        ~ "(e.g. `dbt run-operation paimon_drop_table --args '{relation: " ~ this ~ "}'`), then run again.") -%}
  {%- elif not definition.target and existing_relation is not none
        and not adapter.is_paimon_relation(existing_relation) -%}
    {#-- a view or plain table of the same name from an earlier materialization --#}
    {{ adapter.drop_relation(existing_relation) }}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}

  {#-- 2. build: one atomic Paimon commit --#}
  {%- set response = adapter.paimon_build_model(
        definition, target_relation, compiled_code, should_full_refresh(),
        config.get('on_schema_change', 'ignore'), overwrite_partitions) -%}
  {%- do store_result('main', response=response) -%}

  {#-- a model writing a shared table is a view of it, so ref() and tests see the whole table --#}
  {%- set model_relation = target_relation -%}
  {%- if definition.target -%}
    {%- set model_relation = this.incorporate(type='view') -%}
    {%- call statement('paimon_target_view') -%}
      create or replace view {{ model_relation }} as select * from {{ target_relation }}
    {%- endcall -%}
  {%- endif -%}

  {% do persist_docs(model_relation, model) %}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [model_relation]}) }}
{% endmacro %}
