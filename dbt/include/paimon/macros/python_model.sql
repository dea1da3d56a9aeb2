{%- macro paimon__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language == 'python' -%}
    {{ paimon_py_write_table(compiled_code=compiled_code, target_relation=relation) }}
  {%- else -%}
    {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
  {%- endif -%}
{%- endmacro -%}

{#- The epilogue appended to a Python model: it runs in this process's Spark session (`spark`),
    takes a Spark or pandas DataFrame and saves it as the model's table. -#}
{% macro paimon_py_write_table(compiled_code, target_relation) %}
{{ compiled_code }}
# --- dbt-paimon: materialize the model in the in-process Spark session --- #
import pyspark.sql

dbt = dbtObj(spark.table)
df = model(dbt, spark)
try:
    import pandas
except ImportError:  # pandas is optional
    pandas = None
try:
    import pyspark.pandas as pyspark_pandas
except ImportError:  # needs pandas
    pyspark_pandas = None
if pyspark_pandas is not None and isinstance(df, pyspark_pandas.DataFrame):
    df = df.to_spark()
elif pandas is not None and isinstance(df, pandas.DataFrame):
    df = spark.createDataFrame(df)
if not isinstance(df, pyspark.sql.DataFrame):
    raise TypeError(f"a Python model must return a Spark, pandas or pandas-on-Spark DataFrame, got {type(df)}")
df.write.mode("overwrite").format("{{ config.get('file_format') or 'parquet' }}").saveAsTable("{{ target_relation }}")
{% endmacro %}
