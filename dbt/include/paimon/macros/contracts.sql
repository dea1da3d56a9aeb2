{#- An enforced model contract on a Paimon materialization, before anything is written: the
    query's column names and types against the YAML (dbt's mismatch table), and dbt's warning
    for each constraint Paimon does not enforce. not_null and primary_key constraints shape the
    table itself (adapter.paimon_table_definition). -#}
{% macro paimon_check_contract(sql) %}
  {{ get_assert_columns_equivalent(sql) }}
  {%- do adapter.render_raw_columns_constraints(raw_columns=model['columns']) -%}
  {%- do adapter.render_raw_model_constraints(raw_constraints=model['constraints']) -%}
{% endmacro %}
