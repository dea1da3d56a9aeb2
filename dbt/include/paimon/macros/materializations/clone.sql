{#- `dbt clone` (with --state, often --defer): a model whose state relation is a Paimon table
    becomes a Paimon table holding that table's latest snapshot (ops/clone.py): sharing its
    files (hard links) between local filesystem warehouses, a copy of its rows, through the
    target's catalog, where a catalog registers either table or a warehouse is remote; the
    result's message says which. Any other relation keeps dbt's own clone (a view of it, or
    dbt-spark's shallow clone of a Delta table). -#}
{%- materialization clone, adapter='paimon' -%}
  {%- if not defer_relation -%}
    {{ log("No relation found in state manifest for " ~ model.unique_id, info=True) }}
    {{ return({'relations': []}) }}
  {%- endif -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- if existing_relation and not flags.FULL_REFRESH -%}
    {{ log("Relation " ~ existing_relation ~ " already exists", info=True) }}
    {{ return({'relations': []}) }}
  {%- endif -%}
  {%- if not adapter.is_paimon_relation(defer_relation) -%}
    {%- if config.get('file_format') == 'delta' -%}
      {{ return(materialization_clone_spark()) }}
    {%- endif -%}
    {{ return(materialization_clone_default()) }}
  {%- endif -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- if target_relation.render() == defer_relation.render() -%}
    {{ log("Target relation and defer relation are the same, skipping clone for relation: "
           ~ target_relation.render()) }}
    {{ return({'relations': [target_relation]}) }}
  {%- endif -%}
  {%- if existing_relation is not none and not adapter.is_paimon_relation(existing_relation) -%}
    {{ drop_relation_if_exists(existing_relation) }}
  {%- endif -%}
  {%- do store_result('main', response=adapter.paimon_clone_table(defer_relation,
                                                                  target_relation)) -%}
  {% do persist_docs(target_relation, model) %}
  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization -%}
