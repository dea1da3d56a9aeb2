{#- Seed values are bound as Spark SQL parameters (`?`): quotes and NULLs need no escaping. -#}
{% macro paimon__get_binding_char() %}
  {{ return('?') }}
{% endmacro %}
