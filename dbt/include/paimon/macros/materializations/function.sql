{#- dbt's functions (the `functions/` folder, dbt-core 1.11+) as Spark SQL functions. Spark 4
    keeps a SQL function in the session catalog's metastore (`CREATE FUNCTION ... RETURN`), so a
    function outlives the command that made it, as a view does, and any later dbt process (in
    every mode) calls it. dbt's `function` materialization drives these through dispatch. -#}

{% macro paimon__scalar_function_sql(target_relation) %}
  {{ scalar_function_create_replace_signature_sql(target_relation) }}
  {{ scalar_function_body_sql() }}
{% endmacro %}

{% macro paimon__scalar_function_create_replace_signature_sql(target_relation) %}
  CREATE OR REPLACE FUNCTION {{ target_relation.render() }} ({{ formatted_scalar_function_args_sql() }})
  RETURNS {{ model.returns.data_type }}
  {{ scalar_function_volatility_sql() }}
  {%- if model.description %}
  COMMENT '{{ model.description | replace("\\", "\\\\") | replace("'", "\\'") }}'
  {%- endif %}
  RETURN
{% endmacro %}

{#- Spark's parameters take defaults (`price float DEFAULT 100`) -#}
{% macro paimon__formatted_scalar_function_args_sql() %}
  {%- set args = [] -%}
  {%- for arg in model.arguments -%}
    {%- set default = arg.default_value -%}
    {%- do args.append(arg.name ~ ' ' ~ arg.data_type
                       ~ (' DEFAULT ' ~ default if default is defined and default is not none
                          else '')) -%}
  {%- endfor -%}
  {{ args | join(', ') }}
{% endmacro %}

{#- The body is an expression or a one-value query (`SELECT price * 2`); Spark takes either. -#}
{% macro paimon__scalar_function_body_sql() %}
  {{ model.compiled_code }}
{% endmacro %}

{#- Spark knows DETERMINISTIC and NOT DETERMINISTIC only. `stable` (one result per statement) is
    NOT DETERMINISTIC: Spark then never folds or merges calls, which is safe for any function;
    DETERMINISTIC would let it reuse a result across statements. -#}
{% macro paimon__scalar_function_volatility_sql() %}
  {%- set volatility = model.config.get('volatility') -%}
  {%- if volatility == 'deterministic' -%}
    DETERMINISTIC
  {%- elif volatility in ('stable', 'non-deterministic') -%}
    NOT DETERMINISTIC
  {%- elif volatility is not none -%}
    {% do unsupported_volatility_warning(volatility) %}
  {%- endif -%}
{% endmacro %}

{#- No grants and no persist_docs: Spark grants nothing on functions, and the description is the
    function's COMMENT (dbt-spark's persist_docs would ALTER it as a table). -#}
{% macro paimon__function_execute_build_sql(build_sql, existing_relation, target_relation) %}
  {% if config.get('grants') %}
    {% do exceptions.raise_compiler_error(
      "Function '" ~ model.name ~ "': Spark has no grants on functions; remove `grants` from "
      ~ "its config.") %}
  {% endif %}
  {% call statement(name="main") %}
    {{ build_sql }}
  {% endcall %}
  {{ adapter.commit() }}
{% endmacro %}

{#- What Spark cannot keep: a Python function lives only as long as the session that registered
    it (spark.udf.register), and Spark SQL defines no aggregate functions. -#}
{% macro paimon__scalar_function_python(target_relation) %}
  {% do exceptions.raise_compiler_error(
    "Function '" ~ model.name ~ "': Spark keeps Python functions only for the session that "
    ~ "registers them (spark.udf.register), so dbt cannot create one that later commands call. "
    ~ "Write it as a SQL function (a .sql file whose body is an expression or a one-value "
    ~ "query), or register the Python function inside the Python model that uses it.") %}
{% endmacro %}

{% macro paimon__aggregate_function_sql(target_relation) %}
  {{ paimon__unsupported_aggregate_function() }}
{% endmacro %}

{% macro paimon__aggregate_function_python(target_relation) %}
  {{ paimon__unsupported_aggregate_function() }}
{% endmacro %}

{% macro paimon__unsupported_aggregate_function() %}
  {% do exceptions.raise_compiler_error(
    "Function '" ~ model.name ~ "': Spark SQL cannot define aggregate functions (type: "
    ~ "aggregate); Spark's own aggregates (sum, collect_list, aggregate(...) over an array) "
    ~ "or a Python model can compute it.") %}
{% endmacro %}
