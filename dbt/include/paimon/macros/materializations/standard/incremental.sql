{#- dbt's incremental materialization. file_format='paimon' (the default): each run (each batch
    of a microbatch model) is ONE Paimon commit: append, insert_overwrite (the run's partitions),
    merge (a primary-key table on unique_key), delete+insert, microbatch (the batch's event-time
    window replaced). Other formats: dbt-spark's incremental. -#}
{% materialization incremental, adapter='paimon', supported_languages=['sql', 'python'] %}
  {%- if paimon_file_format() != 'paimon' -%}
    {{ return(materialization_incremental_spark()) }}
  {%- endif -%}
  {#-- as dbt-databricks on Delta: a model with a unique_key merges, one without appends --#}
  {%- set strategy = config.get('incremental_strategy')
        or ('merge' if config.get('unique_key') else 'append') -%}
  {%- set batch = model.get('batch') -%}
  {%- set standard = {'strategy': strategy, 'config': model['config']} -%}
  {%- if strategy == 'microbatch' and batch -%}
    {%- do standard.update({'batch_start': batch.event_time_start,
                            'batch_end': batch.event_time_end}) -%}
  {%- endif -%}
  {{ return(paimon_build_model('incremental', standard=standard)) }}
{% endmaterialization %}
