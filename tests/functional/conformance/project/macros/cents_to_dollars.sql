{% macro cents_to_dollars(column_name, scale=2) -%}
  cast({{ column_name }} / 100 as decimal(16, {{ scale }}))
{%- endmacro %}
