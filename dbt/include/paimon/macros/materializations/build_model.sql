{#- The one build sequence of every Paimon materialization: validate, pre-hooks, one atomic
    Paimon commit, docs, post-hooks. `standard`: dbt's table/incremental/seed materializations
    (file_format='paimon'): see materialize/standard_writes.py. -#}
{% macro paimon_build_model(materialization, overwrite_partitions=false, standard=none) %}
  {#-- 1. validate: contract and config against the query's columns, before anything is written;
       an enforced contract also fixes the columns' order: the YAML's (as dbt's create table as) --#}
  {%- set python = model.get('language') == 'python' -%}
  {%- set sql = paimon_python_rows_query() if python else compiled_code -%}
  {%- if config.get('contract') and config.get('contract').enforced -%}
    {{ paimon_check_contract(compiled_code) }}
    {%- set sql = get_select_subquery(compiled_code) -%}
  {%- endif -%}
  {%- set prepared = paimon_prepare_model(materialization, sql) -%}

  {{ run_hooks(pre_hooks) }}

  {#-- 2. build: one atomic Paimon commit --#}
  {%- set response = paimon_write_model(prepared, sql, overwrite_partitions, standard) -%}
  {%- do store_result('main', response=response) -%}
  {%- if python -%}{%- do paimon_drop_python_rows() -%}{%- endif -%}
  {#-- the run file (target/run): the table Paimon's catalog holds now, and the query whose rows
       this run committed --#}
  {%- do write(adapter.paimon_table_ddl(prepared.target_relation) ~ ";\n"
               ~ "-- the model's rows, written as one Paimon commit:\n" ~ sql) -%}

  {#-- a model writing a shared table is a view of it, so ref() and tests see the whole table:
       with schema evolution, as the columns other writers add later are part of it too (a
       plain view keeps the columns the table had when it was made) --#}
  {%- set model_relation = prepared.target_relation -%}
  {%- if prepared.definition.target -%}
    {%- set model_relation = this.incorporate(type='view') -%}
    {%- call statement('paimon_target_view') -%}
      create or replace view {{ model_relation }} with schema evolution
      as select * from {{ prepared.target_relation }}
    {%- endcall -%}
  {%- endif -%}

  {% do persist_docs(model_relation, model) %}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [model_relation]}) }}
{% endmacro %}

{#- Validate a model's config against its query (`sql`) before anything is written; returns
    {definition, target_relation}. -#}
{% macro paimon_prepare_model(materialization, sql, local_rows=none) %}
  {%- set definition = adapter.paimon_table_definition(model, materialization, sql, local_rows) -%}
  {%- set target_relation = adapter.paimon_target_relation(definition, this) -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- if definition.target and existing_relation is not none and existing_relation.type != 'view' -%}
    {%- do exceptions.raise_compiler_error(
        "Model '" ~ model.name ~ "' writes into the shared table " ~ target_relation ~ " (config "
        ~ "`target`), but " ~ this ~ " is still a table from an earlier configuration. Drop it "
        ~ "(e.g. `dbt run-operation paimon_drop_table --args '{relation: " ~ this ~ "}'`), then run again.") -%}
  {%- endif -%}
  {{ return({'definition': definition, 'target_relation': target_relation,
             'existing_relation': existing_relation}) }}
{% endmacro %}

{#- Write the rows of `sql` as one Paimon commit; returns the adapter response. `local_rows`:
    the same rows as Arrow this process holds (a seed's file). -#}
{% macro paimon_write_model(prepared, sql, overwrite_partitions=false, standard=none,
                            local_rows=none) %}
  {%- set existing_relation = prepared.existing_relation -%}
  {%- if not prepared.definition.target and existing_relation is not none
        and not adapter.is_paimon_relation(existing_relation) -%}
    {#-- a view or plain table of the same name from an earlier materialization --#}
    {{ adapter.drop_relation(existing_relation) }}
  {%- endif -%}
  {{ return(adapter.paimon_build_model(
        prepared.definition, prepared.target_relation, sql, should_full_refresh(),
        config.get('on_schema_change', 'ignore'), overwrite_partitions, standard, local_rows)) }}
{% endmacro %}
