{#- A Paimon primary-key table: each run merges the model's rows into it as ONE Paimon commit,
    with the table's merge engine (deduplicate, first-row, aggregation, partial-update). -#}
{% materialization paimon_pk, adapter='paimon', supported_languages=['sql', 'python'] %}
  {%- if model.language == 'python' -%}  {#-- its rows first: python_model.sql --#}
    {%- call statement('paimon_python_rows', language='python') -%}
      {{ paimon_python_rows_code() }}
    {%- endcall -%}
  {%- endif -%}
  {{ return(paimon_build_model('paimon_pk')) }}
{% endmaterialization %}

{#- partial_update: paimon_pk with merge_engine='partial-update', for wide tables assembled from
    several models (each with its own sequence group). -#}
{% materialization partial_update, adapter='paimon', supported_languages=['sql', 'python'] %}
  {%- if model.language == 'python' -%}  {#-- its rows first: python_model.sql --#}
    {%- call statement('paimon_python_rows', language='python') -%}
      {{ paimon_python_rows_code() }}
    {%- endcall -%}
  {%- endif -%}
  {{ return(paimon_build_model('partial_update')) }}
{% endmaterialization %}
