{#- A Paimon append table (scalable with buckets=-1, a queue with buckets=N): each run appends its
    rows as ONE Paimon commit; incremental_strategy='insert_overwrite' replaces the partitions the
    run writes, --full-refresh the whole table; incremental_strategy='merge' (row-tracking
    tables, with unique_key) merges the run's rows INTO the table, keeping row ids. -#}
{% materialization paimon_append, adapter='paimon', supported_languages=['sql', 'python'] %}
  {%- set strategy = config.get('incremental_strategy') or 'append' -%}
  {%- if strategy not in ['append', 'insert_overwrite', 'merge'] -%}
    {%- do exceptions.raise_compiler_error(
        "Model '" ~ model.name ~ "': incremental_strategy '" ~ strategy ~ "' is not supported by "
        ~ "materialized='paimon_append'. Expected one of: append, insert_overwrite, merge.") -%}
  {%- endif -%}
  {%- if model.language == 'python' -%}  {#-- its rows first: python_model.sql --#}
    {%- call statement('paimon_python_rows', language='python') -%}
      {{ paimon_python_rows_code() }}
    {%- endcall -%}
  {%- endif -%}
  {{ return(paimon_build_model('paimon_append', overwrite_partitions=(strategy == 'insert_overwrite'))) }}
{% endmaterialization %}
