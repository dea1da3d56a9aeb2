{#- Bindings of dbt's own `add_query(..., bindings=...)` are Spark SQL parameters (`?`): quotes
    and NULLs need no escaping. -#}
{% macro paimon__get_binding_char() %}
  {{ return('?') }}
{% endmacro %}

{#- dbt's seed materialization (global_project seeds/seed.sql), whose first step,
    load_agate_table(), parses every value of the file in Python (most of a large seed's time)
    and cannot be dispatched. Here the file is read by adapter.paimon_seed_rows (Arrow, with the
    types dbt would infer: materialize/seed_csv.py) into a temporary view, and the view's rows are
    written as dbt's seed would: with file_format='paimon' (the default) as ONE Paimon commit
    (OVERWRITE once the table exists); with any other file_format as dbt-spark does (drop,
    create, insert). Hooks, grants, docs and the `INSERT n`/`CREATE n` status are dbt's. -#}
{% materialization seed, adapter='paimon' %}
  {%- set identifier = model['alias'] -%}
  {%- set full_refresh_mode = (should_full_refresh()) -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set exists_as_table = (old_relation is not none and old_relation.is_table) -%}
  {%- set exists_as_view = (old_relation is not none and old_relation.is_view) -%}
  {%- set grant_config = config.get('grants') -%}

  {%- set seed = adapter.paimon_seed_rows(model, this, flags.EMPTY) -%}
  {%- if seed.unknown_overrides -%}
    {%- do exceptions.warn("Column types specified for non-existent columns in seed '" ~ model.name
        ~ "': " ~ (seed.unknown_overrides | join(', ')) ~ ". These column type overrides will be ignored.") -%}
  {%- endif -%}
  {%- do store_result('agate_table', response='OK', agate_table=seed.sample) -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  -- `BEGIN` happens here:
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {% if exists_as_view %}
    {{ exceptions.raise_compiler_error("Cannot seed to '{}', it is a view".format(old_relation.render())) }}
  {% endif %}
  {% set create_table_sql = "" %}
  {% if paimon_file_format() == 'paimon' %}
    {#-- the rows typed in this process are written without a Spark query when the table
         allows it (a new or same-columns append table); otherwise Spark casts the view --#}
    {%- set written = none -%}
    {%- if seed.local_rows is not none -%}
      {%- set prepared = paimon_prepare_model('seed', seed.sql, seed.local_rows) -%}
      {%- set written = paimon_write_model(prepared, seed.sql, standard={'strategy': 'replace'},
                                           local_rows=seed.local_rows) -%}
    {%- endif -%}
    {%- if written is none -%}
      {%- do adapter.paimon_seed_view(seed) -%}
      {%- set prepared = paimon_prepare_model('seed', seed.sql) -%}
      {%- do paimon_write_model(prepared, seed.sql, standard={'strategy': 'replace'}) -%}
    {%- endif -%}
    {% set sql = seed.sql %}
  {% else %}
    {% do adapter.paimon_seed_view(seed) %}
    {% if old_relation is not none %}
      {{ adapter.drop_relation(old_relation) }}
    {% endif %}
    {% set create_table_sql = paimon_seed_create_table(seed) %}
    {% set sql = "insert into " ~ this.render() ~ " " ~ seed.sql %}
    {% if seed.rows > 0 %}
      {% call statement('_') -%}{{ sql }}{%- endcall %}
    {% endif %}
  {% endif %}
  {% do adapter.paimon_drop_seed_rows(seed) %}

  {% set code = 'CREATE' if full_refresh_mode else 'INSERT' %}
  {% call noop_statement('main', code ~ ' ' ~ seed.rows, code, seed.rows) %}
    {{ get_csv_sql(create_table_sql, sql) }};
  {% endcall %}

  {% set target_relation = this.incorporate(type='table') %}
  {% set should_revoke = should_revoke(old_relation, full_refresh_mode) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}
  {% if full_refresh_mode or not exists_as_table %}
    {% do create_indexes(target_relation) %}
  {% endif %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  -- `COMMIT` happens here
  {{ adapter.commit() }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{#- dbt-spark's create_csv_table, with the columns from the file read by paimon_seed_rows -#}
{% macro paimon_seed_create_table(seed) %}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {% set sql %}
    create table {{ this.render() }} (
      {%- for name, type in seed.columns -%}
        {{ adapter.quote_seed_column(name | string, quote_seed_column) }} {{ type }}
        {%- if not loop.last -%}, {%- endif -%}
      {%- endfor -%}
    )
    {{ file_format_clause() }}
    {{ partition_cols(label="partitioned by") }}
    {{ clustered_cols(label="clustered by") }}
    {{ location_clause() }}
    {{ comment_clause() }}
  {% endset %}
  {% call statement('_') -%}
    {{ sql }}
  {%- endcall %}
  {{ return(sql) }}
{% endmacro %}
