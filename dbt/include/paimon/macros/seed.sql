{#- Seed values are bound as Spark SQL parameters (`?`): quotes and NULLs need no escaping. -#}
{% macro paimon__get_binding_char() %}
  {{ return('?') }}
{% endmacro %}

{#- Seeds with file_format='paimon' (the default): dbt's seed materialization, with its table
    steps overridden: nothing is dropped or created up front; the rows, loaded in dbt's batches
    into temporary views, become the Paimon table in ONE commit (OVERWRITE once it exists). -#}
{% macro paimon__create_csv_table(model, agate_table) %}
  {%- if paimon_file_format() != 'paimon' -%}
    {{ return(spark__create_csv_table(model, agate_table)) }}
  {%- endif -%}
  {%- if agate_table.rows | length == 0 -%}
    {#-- dbt loads no rows then: the empty table is written here --#}
    {{ return(paimon_write_seed(model, agate_table)) }}
  {%- endif -%}
  {{ return('') }}
{% endmacro %}

{% macro paimon__reset_csv_table(model, full_refresh, old_relation, agate_table) %}
  {%- if paimon_file_format() != 'paimon' -%}
    {{ return(spark__reset_csv_table(model, full_refresh, old_relation, agate_table)) }}
  {%- endif -%}
  {{ return(paimon__create_csv_table(model, agate_table)) }}
{% endmacro %}

{% macro paimon__load_csv_rows(model, agate_table) %}
  {%- if paimon_file_format() != 'paimon' -%}
    {{ return(spark__load_csv_rows(model, agate_table)) }}
  {%- endif -%}
  {{ return(paimon_write_seed(model, agate_table)) }}
{% endmacro %}

{#- The seed's rows as temporary views (one per dbt batch, values bound as parameters, cast to
    the seed's column types), then one Paimon commit of their union. Returns the first batch's
    SQL (dbt shows it as the seed's compiled SQL). -#}
{% macro paimon_write_seed(model, agate_table) %}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {%- set columns = [] -%}
  {%- for col_name in agate_table.column_names -%}
    {%- set inferred_type = adapter.convert_type(agate_table, loop.index0) -%}
    {%- do columns.append({'name': (col_name | string),
                           'type': column_override.get(col_name, inferred_type)}) -%}
  {%- endfor -%}
  {%- set aliases = [] -%}
  {%- for column in columns -%}
    {%- do aliases.append('`' ~ column.name | replace('`', '``') ~ '`') -%}
  {%- endfor -%}
  {%- set views = [] -%}
  {%- set statements = [] -%}
  {%- for chunk in agate_table.rows | batch(get_batch_size()) -%}
    {%- set view = '`' ~ this.identifier ~ '__dbt_seed_rows_' ~ loop.index0 ~ '`' -%}
    {%- set bindings = [] -%}
    {%- for row in chunk -%}
      {%- do bindings.extend(row) -%}
    {%- endfor -%}
    {%- set sql -%}
      create or replace temporary view {{ view }} as select * from values
      {% for row in chunk -%}
        ({%- for column in columns -%}
          cast({{ get_binding_char() }} as {{ column.type }}){%- if not loop.last -%}, {% endif -%}
        {%- endfor -%}){%- if not loop.last -%},{%- endif %}
      {% endfor -%}
      as t({{ aliases | join(', ') }})
    {%- endset -%}
    {%- do adapter.add_query(sql, bindings=bindings, abridge_sql_log=True) -%}
    {%- do views.append(view) -%}
    {%- if loop.index0 == 0 -%}{%- do statements.append(sql) -%}{%- endif -%}
  {%- endfor -%}
  {%- set rows_sql -%}
    {%- if views -%}
      {%- for view in views -%}select * from {{ view }}{%- if not loop.last %} union all {% endif -%}{%- endfor -%}
    {%- else -%}
      select {% for column in columns -%}
        cast(null as {{ column.type }}) as {{ aliases[loop.index0] }}{%- if not loop.last -%}, {% endif -%}
      {%- endfor %} where false
    {%- endif -%}
  {%- endset -%}
  {%- set prepared = paimon_prepare_model('seed', rows_sql) -%}
  {%- do paimon_write_model(prepared, rows_sql, standard={'strategy': 'replace'}) -%}
  {%- for view in views -%}
    {%- do adapter.add_query('drop view if exists ' ~ view, auto_begin=false) -%}
  {%- endfor -%}
  {{ return(statements[0] if statements else rows_sql) }}
{% endmacro %}
