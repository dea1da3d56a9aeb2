{#- What changed between two snapshots or two tags, as Paimon's `incremental-between` reads it:
      select * from {{ paimon_changes_between(ref('orders'), 7, 12) }}            -- commits 8..12
      select * from {{ paimon_changes_between(ref('orders'), 'nov', 'dec') }}     -- tag to tag
    Snapshot ids: the rows commits (start, end] wrote, with `_row_kind` (changelog files when the
    table has a changelog producer; mode='delta' or 'changelog' chooses), like paimon_changes
    but with no consumer. Tags (primary-key tables): the end version's rows of keys new since
    the start tag (+I) or changed (+U); a key deleted in between is not returned, as in Paimon.
    A temporary view of this session (docs/tags_and_rollback.md#changes-between-tags). -#}
{% macro paimon_changes_between(relation, start, end, mode=none) %}
  {%- if execute -%}
    {{- return(adapter.paimon_changes_between_view(relation, start, end, mode)) -}}
  {%- endif -%}
  {{- return(relation) -}}
{% endmacro %}
