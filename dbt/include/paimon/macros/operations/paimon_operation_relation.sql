{#- The Paimon table an operation acts on: `model` (a model name, resolved through the graph to
    its database, schema and alias) or `relation` ('schema.table', any Paimon table of the
    warehouse). Exactly one of them. Found in its catalog, without Spark: an operation on a
    table's files starts none. -#}
{% macro paimon_operation_relation(operation, model=none, relation=none) %}
  {%- if (model is none) == (relation is none) -%}
    {%- do exceptions.raise_compiler_error(
          operation ~ ": pass exactly one of 'model' (a model name) or 'relation' "
          ~ "('schema.table'), e.g. --args '{model: orders}'") -%}
  {%- endif -%}
  {%- if model is not none -%}
    {%- set found = namespace(node=none) -%}
    {%- for node in graph.nodes.values() -%}
      {%- if node.resource_type == 'model' and node.name == model -%}
        {%- set found.node = node -%}
      {%- endif -%}
    {%- endfor -%}
    {%- if found.node is none -%}
      {%- do exceptions.raise_compiler_error(
            operation ~ ": there is no model named '" ~ model ~ "' in this project") -%}
    {%- endif -%}
    {%- set target = adapter.paimon_operation_target(found.node.database, found.node.schema,
                                                     found.node.alias) -%}
    {%- set label = "model '" ~ model ~ "' (" ~ found.node.schema ~ "." ~ found.node.alias ~ ")" -%}
  {%- else -%}
    {%- set parts = relation.split('.') -%}
    {%- if parts | length != 2 -%}
      {%- do exceptions.raise_compiler_error(
            operation ~ ": relation must be 'schema.table', got '" ~ relation ~ "'") -%}
    {%- endif -%}
    {%- set target = adapter.paimon_operation_target(none, parts[0], parts[1]) -%}
    {%- set label = "relation " ~ relation -%}
  {%- endif -%}
  {%- if target is none or not adapter.is_paimon_relation(target) -%}
    {%- do exceptions.raise_compiler_error(
          operation ~ ": " ~ label ~ " is not a Paimon table in this warehouse (run the model first?)") -%}
  {%- endif -%}
  {{ return(target) }}
{% endmacro %}
