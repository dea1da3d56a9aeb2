{#- dbt's table materialization. file_format='paimon' (the default for SQL models): the model's
    Paimon table is replaced by ONE OVERWRITE commit each run (a primary-key table with
    `primary_key`, an append table otherwise); other formats: dbt-spark's table. -#}
{% materialization table, adapter='paimon', supported_languages=['sql', 'python'] %}
  {%- if paimon_file_format() == 'paimon' -%}
    {%- if model.language == 'python' -%}  {#-- its rows first: python_model.sql --#}
      {%- call statement('paimon_python_rows', language='python') -%}
        {{ paimon_python_rows_code() }}
      {%- endcall -%}
    {%- endif -%}
    {{ return(paimon_build_model('table', standard={'strategy': 'replace'})) }}
  {%- elif model['language'] != 'python' -%}
    {{ return(materialization_table_spark()) }}
  {%- endif -%}
  {#-- A Python model: dbt submits its code only from a `statement` that the materialization
       itself calls, so it is written here rather than by dbt-spark's table. --#}
  {%- set old_relation = load_cached_relation(this) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {{ run_hooks(pre_hooks) }}
  {%- if old_relation is not none -%}
    {{ adapter.drop_relation(old_relation) }}
  {%- endif -%}
  {%- call statement('main', language='python') -%}
    {{ create_table_as(False, target_relation, compiled_code, 'python') }}
  {%- endcall -%}
  {% do persist_docs(target_relation, model) %}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
