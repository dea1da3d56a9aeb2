{#- file_format of dbt's table, incremental, seed (and snapshot) materializations: 'paimon' (the
    default in a dbt-paimon project) builds a Paimon table through paimon_build_model; a format
    dbt-spark knows (parquet, delta, ...) keeps dbt-spark's materialization; delta, iceberg
    and hudi only where this Spark has their data source (else an error saying what to change).
    Python models too: their DataFrame is written as a Paimon table, unless file_format names
    a Spark format. -#}
{% macro paimon_file_format() %}
  {%- set configured = config.get('file_format') -%}
  {%- set file_format = configured or 'paimon' -%}
  {%- set spark_formats = ['text', 'csv', 'json', 'jdbc', 'parquet', 'orc', 'hive', 'delta',
                           'iceberg', 'libsvm', 'hudi'] -%}
  {%- if file_format != 'paimon' and file_format not in spark_formats -%}
    {%- do exceptions.raise_compiler_error(
        "Model '" ~ model.name ~ "': config file_format='" ~ file_format ~ "' is not known. "
        ~ "Expected 'paimon' (the default: a Paimon table) or one of dbt-spark's formats: "
        ~ spark_formats | join(', ') ~ ".") -%}
  {%- endif -%}
  {%- if file_format in ['delta', 'iceberg', 'hudi'] and adapter.spark_lacks_data_source(file_format) -%}
    {%- do exceptions.raise_compiler_error(
        "Model '" ~ model.name ~ "': config file_format='" ~ file_format ~ "' builds a "
        ~ file_format ~ " table with dbt-spark's materialization, but this Spark has no "
        ~ file_format ~ " data source. Set file_format='paimon' (or remove file_format: "
        ~ "'paimon' is the default) for a Paimon table; to keep " ~ file_format ~ ", add its "
        ~ "Spark package to the profile's spark_conf (spark.jars.packages).") -%}
  {%- endif -%}
  {{ return(file_format) }}
{% endmacro %}
