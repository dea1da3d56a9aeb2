{#- not_matched_by_source_action (dbt-databricks' config for merges that delete): 'ignore' (the
    default) keeps stored rows the run does not match; 'delete' deletes them in the run's commit,
    those meeting not_matched_by_source_condition (SQL on the stored row, DBT_INTERNAL_DEST)
    when it is set. Only with incremental_strategy 'merge', as are matched_condition,
    not_matched_condition, skip_matched_step and skip_not_matched_step. Returns the action. -#}
{% macro paimon_validate_not_matched_by_source(strategy) %}
  {%- set action = (config.get('not_matched_by_source_action') or 'ignore') | string | lower -%}
  {%- set condition = config.get('not_matched_by_source_condition') -%}
  {%- set errors = [] -%}
  {%- if action not in ['ignore', 'delete'] -%}
    {%- do errors.append("not_matched_by_source_action is '" ~ action ~ "'; expected 'ignore' "
        ~ "(the default: stored rows the run does not match stay) or 'delete' (they are "
        ~ "deleted in the run's commit)") -%}
  {%- elif action == 'delete' and strategy != 'merge' -%}
    {%- do errors.append("not_matched_by_source_action='delete' goes with "
        ~ "incremental_strategy='merge' (with a unique_key), not '" ~ strategy ~ "'") -%}
  {%- endif -%}
  {#- dbt-databricks' WHEN MATCHED / WHEN NOT MATCHED clauses (standard_writes.merge_clauses) -#}
  {%- set clauses = [] -%}
  {%- for name in ['matched_condition', 'not_matched_condition', 'skip_matched_step',
                   'skip_not_matched_step'] -%}
    {%- if config.get(name) -%}{%- do clauses.append(name) -%}{%- endif -%}
  {%- endfor -%}
  {%- if clauses and (strategy != 'merge' or not config.get('unique_key')) -%}
    {%- do errors.append(clauses | join(', ') ~ " (which run rows a merge writes) need "
        ~ "incremental_strategy='merge' with a unique_key: set both, or remove "
        ~ ("it" if clauses | length == 1 else "them")) -%}
  {%- endif -%}
  {%- if condition and action != 'delete' -%}
    {%- do errors.append("not_matched_by_source_condition is set but "
        ~ "not_matched_by_source_action is '" ~ action ~ "': set it to 'delete', or remove "
        ~ "the condition") -%}
  {%- endif -%}
  {%- if errors -%}
    {%- do exceptions.raise_compiler_error("Model '" ~ model.name ~ "': "
        ~ errors | join('; ') ~ ".") -%}
  {%- endif -%}
  {{ return(action) }}
{% endmacro %}
