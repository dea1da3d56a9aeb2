{#- dbt's incremental materialization. file_format='paimon' (the default for SQL models): each
    run (each batch of a microbatch model) is ONE Paimon commit: append, insert_overwrite (the
    run's partitions), merge (a primary-key table on unique_key), delete+insert, microbatch (the
    batch's event-time window replaced). Other formats: dbt-spark's incremental. -#}
{% materialization incremental, adapter='paimon', supported_languages=['sql', 'python'] %}
  {%- set file_format = paimon_file_format() -%}
  {%- if file_format != 'paimon' and model['language'] != 'python' -%}
    {{ return(materialization_incremental_spark()) }}
  {%- elif file_format != 'paimon' -%}
    {#-- A Python model: dbt submits its code only from a `statement` that the materialization
         itself calls, so it is written here with dbt-spark's strategy SQL. --#}
    {%- set strategy = dbt_spark_validate_get_incremental_strategy(
          config.get('incremental_strategy') or 'append', file_format) -%}
    {%- set on_schema_change = incremental_validate_on_schema_change(
          config.get('on_schema_change'), default='ignore') -%}
    {%- set existing_relation = load_cached_relation(this) -%}
    {%- set target_relation = this.incorporate(type='table') -%}
    {%- set tmp_relation = this.incorporate(path={'identifier': this.identifier ~ '__dbt_tmp'}) -%}
    {{ run_hooks(pre_hooks) }}
    {%- if existing_relation is none or existing_relation.is_view or should_full_refresh() -%}
      {%- if existing_relation is not none -%}
        {% do adapter.drop_relation(existing_relation) %}
      {%- endif -%}
      {%- call statement('main', language='python') -%}
        {{ create_table_as(False, target_relation, compiled_code, 'python') }}
      {%- endcall -%}
    {%- else -%}
      {%- call statement('create_tmp_relation', language='python') -%}
        {{ create_table_as(True, tmp_relation, compiled_code, 'python') }}
      {%- endcall -%}
      {%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
      {%- call statement('main') -%}
        {{ dbt_spark_get_incremental_sql(strategy, tmp_relation, target_relation,
             existing_relation, config.get('unique_key'),
             config.get('predicates') or config.get('incremental_predicates')) }}
      {%- endcall -%}
      {%- call statement('drop_relation') -%}
        drop table if exists {{ tmp_relation }}
      {%- endcall -%}
    {%- endif -%}
    {% do persist_docs(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}
  {#-- as dbt-databricks on Delta: a model with a unique_key merges, one without appends --#}
  {%- set strategy = config.get('incremental_strategy')
        or ('merge' if config.get('unique_key') else 'append') -%}
  {%- do paimon_validate_not_matched_by_source(strategy) -%}
  {%- if model.language == 'python' -%}  {#-- its rows first: python_model.sql --#}
    {%- call statement('paimon_python_rows', language='python') -%}
      {{ paimon_python_rows_code() }}
    {%- endcall -%}
  {%- endif -%}
  {%- set batch = model.get('batch') -%}
  {%- set standard = {'strategy': strategy, 'config': model['config']} -%}
  {%- if strategy == 'microbatch' and batch -%}
    {%- do standard.update({'batch_start': batch.event_time_start,
                            'batch_end': batch.event_time_end}) -%}
  {%- endif -%}
  {{ return(paimon_build_model('incremental', standard=standard)) }}
{% endmaterialization %}
