-- A row-tracking table: every row has a stable _ROW_ID and a _SEQUENCE_NUMBER (the snapshot
-- that last changed it). Runs MERGE INTO it on order_id; run_demo.py updates a row with the
-- update_rows operation and reads the hidden columns with paimon_row_tracking().
{{ config(materialized='paimon_append', row_tracking=true, incremental_strategy='merge',
          unique_key='order_id') }}
select order_id, status, cast(null as string) as note
from {{ ref('stg_orders') }}
