{%- macro paimon__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language == 'python' -%}
    {{ paimon_py_write_table(compiled_code=compiled_code, target_relation=relation) }}
  {%- else -%}
    {{ spark__create_table_as(temporary, relation, compiled_code, language) }}
  {%- endif -%}
{%- endmacro -%}

{#- The code that runs a Python model in this process's Spark session (`spark`) and leaves
    its result as a Spark DataFrame `df` (from a Spark, pandas or pandas-on-Spark DataFrame). -#}
{% macro paimon_py_dataframe(compiled_code) %}
{{ compiled_code }}
# --- dbt-paimon: run the model in the in-process Spark session --- #
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
{% endmacro %}

{#- A Python model with a Spark file_format (parquet, delta...): Spark saves its table. -#}
{% macro paimon_py_write_table(compiled_code, target_relation) %}
{{ paimon_py_dataframe(compiled_code) }}
df.write.mode("overwrite").format("{{ config.get('file_format') or 'parquet' }}").saveAsTable("{{ target_relation }}")
{% endmacro %}

{#- A Python model building a Paimon table: its DataFrame becomes a temporary view, which the
    materialization then writes as SQL models' queries are (one Paimon commit). dbt runs a
    model's Python only from a `statement` its materialization calls itself, so each Paimon
    materialization runs this code first:
        {%- if model.language == 'python' -%}
          {%- call statement('paimon_python_rows', language='python') -%}
            {{ paimon_python_rows_code() }}
          {%- endcall -%}
        {%- endif -%}
    paimon_build_model then reads the view (paimon_python_rows_query) and drops it. -#}
{% macro paimon_python_rows_code() %}
{{ paimon_py_dataframe(compiled_code) }}
df.createOrReplaceTempView("{{ paimon_python_rows_view() }}")
{% endmacro %}

{% macro paimon_python_rows_query() %}
  {{ return('select * from `' ~ paimon_python_rows_view() ~ '`') }}
{% endmacro %}

{#- The view's name: one per model and invocation (over Spark Connect the session is shared by
    every dbt process). -#}
{% macro paimon_python_rows_view() %}
  {{ return('dbt_paimon_python_' ~ model.name | lower ~ '_' ~ invocation_id.replace('-', '')[:12]) }}
{% endmacro %}

{% macro paimon_drop_python_rows() %}
  {%- call statement('paimon_drop_python_rows') -%}
    drop view if exists `{{ paimon_python_rows_view() }}`
  {%- endcall -%}
{% endmacro %}
