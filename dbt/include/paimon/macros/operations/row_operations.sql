{#- UPDATE / DELETE / MERGE INTO on a row-tracking append table (config row_tracking=true), each
    ONE Paimon commit that keeps every row's _ROW_ID and sets _SEQUENCE_NUMBER of the changed
    rows to the new snapshot id (copy-on-write of the data files holding affected rows).

    dbt run-operation update_rows --args '{model: t, set: {data: "new-data-update"}, where: "id = 11"}'
      set: column -> literal value; set_sql: column -> Spark SQL expression ("upper(data)")
    dbt run-operation delete_rows --args '{model: t, where: "_ROW_ID = 0"}'
    dbt run-operation merge_rows --args '{model: t, source: s, condition: "t.id = s.id", update: {data: "s.data"}}'
      source: a model or seed name, or query: a SQL query; condition: the ON condition (not
      `on`, which YAML reads as true), over the table `t` and the source `s`;
      update: "*" (default: every column from s), {column: expression} or none;
      insert: "*" (default), {column: expression} or none (not-matched rows are not inserted).
    Conditions are Spark SQL and may use _ROW_ID and _SEQUENCE_NUMBER.
    Every operation takes `model` (a model name) or `relation` ('schema.table'), and
    `write_path` (auto, in_process or distributed; default: the profile's
    spark.dbt.paimon.writePath, else auto): which executor runs it (docs/write_paths.md). -#}
{% macro update_rows(model=none, relation=none, where=none, set=none, set_sql=none,
                     write_path=none) %}
  {{ return(adapter.dispatch('update_rows')(model, relation, where, set, set_sql,
                                            write_path)) }}
{% endmacro %}

{% macro paimon__update_rows(model, relation, where, set, set_sql, write_path=none) %}
  {%- set target = paimon_operation_relation('update_rows', model, relation) -%}
  {%- set message = adapter.paimon_update_rows(target, where, set, set_sql, write_path) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}

{% macro delete_rows(model=none, relation=none, where=none, write_path=none) %}
  {{ return(adapter.dispatch('delete_rows')(model, relation, where, write_path)) }}
{% endmacro %}

{% macro paimon__delete_rows(model, relation, where, write_path=none) %}
  {%- set target = paimon_operation_relation('delete_rows', model, relation) -%}
  {%- set message = adapter.paimon_delete_rows(target, where, write_path) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}

{% macro merge_rows(model=none, relation=none, source=none, query=none, condition=none,
                    update='*', insert='*', write_path=none) %}
  {{ return(adapter.dispatch('merge_rows')(model, relation, source, query, condition, update,
                                           insert, write_path)) }}
{% endmacro %}

{% macro paimon__merge_rows(model, relation, source, query, condition, update, insert,
                            write_path=none) %}
  {%- set target = paimon_operation_relation('merge_rows', model, relation) -%}
  {%- if (source is none) == (query is none) -%}
    {%- do exceptions.raise_compiler_error(
          "merge_rows: pass exactly one of 'source' (a model or seed name) or 'query' (SQL), "
          ~ "e.g. --args '{model: t, source: s, condition: \"t.id = s.id\"}'") -%}
  {%- endif -%}
  {%- if source is not none -%}
    {%- set found = namespace(node=none) -%}
    {%- for node in graph.nodes.values() -%}
      {%- if node.resource_type in ['model', 'seed', 'snapshot'] and node.name == source -%}
        {%- set found.node = node -%}
      {%- endif -%}
    {%- endfor -%}
    {%- if found.node is none -%}
      {%- do exceptions.raise_compiler_error(
            "merge_rows: there is no model or seed named '" ~ source ~ "' in this project") -%}
    {%- endif -%}
    {%- set query = "select * from " ~ api.Relation.create(
          schema=found.node.schema, identifier=found.node.alias) -%}
  {%- endif -%}
  {%- set message = adapter.paimon_merge_rows(target, query, condition, update, insert,
                                              write_path) -%}
  {{ log(message, info=True) }}
  {{ return(message) }}
{% endmacro %}
