{#- dbt's table materialization. file_format='paimon' (the default): the model's Paimon table is
    replaced by ONE OVERWRITE commit each run (a primary-key table with `primary_key`, an append
    table otherwise); other formats: dbt-spark's table. -#}
{% materialization table, adapter='paimon', supported_languages=['sql', 'python'] %}
  {%- if paimon_file_format() == 'paimon' -%}
    {{ return(paimon_build_model('table', standard={'strategy': 'replace'})) }}
  {%- else -%}
    {{ return(materialization_table_spark()) }}
  {%- endif -%}
{% endmaterialization %}
