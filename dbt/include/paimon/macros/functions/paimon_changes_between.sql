{#- What changed between two snapshots, two tags or two times, as Paimon's `incremental-between`
    and `incremental-between-timestamp` read it:
      select * from {{ paimon_changes_between(ref('orders'), 7, 12) }}            -- commits 8..12
      select * from {{ paimon_changes_between(ref('orders'), 'nov', 'dec') }}     -- tag to tag
      select * from {{ paimon_changes_between(ref('orders'), start_timestamp='2026-11-01 00:00:00',
                                              end_timestamp='2026-11-02 00:00:00') }}
    Snapshot ids: the rows commits (start, end] wrote, with `_row_kind` (changelog files when the
    table has a changelog producer; mode='delta' or 'changelog' chooses), like paimon_changes
    but with no consumer. Timestamps (epoch milliseconds or local 'YYYY-MM-DD HH:MM:SS'): the
    same, between the snapshots Paimon selects for them. Tags: of a primary-key table, the end
    version's rows of keys new since the start tag (+I) or changed (+U), a key deleted in
    between not returned; of an append table, the rows of the files the end tag has and the
    start tag has not (+I), as in Paimon. A temporary view of this session
    (docs/tags_and_rollback.md#changes-between-snapshots-tags-and-times). -#}
{% macro paimon_changes_between(relation, start=none, end=none, mode=none, start_timestamp=none,
                                end_timestamp=none) %}
  {%- if execute -%}
    {{- return(adapter.paimon_changes_between_view(relation, start, end, mode, start_timestamp,
                                                   end_timestamp)) -}}
  {%- endif -%}
  {{- return(relation) -}}
{% endmacro %}
