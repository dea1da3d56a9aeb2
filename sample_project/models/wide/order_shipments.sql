{{ config(materialized='partial_update', target='orders_wide', primary_key='order_id',
          sequence_groups={'ship_ts': ['carrier', 'ship_status']}, buckets=2) }}
select cast(order_id as bigint) as order_id, carrier, ship_status,
       cast(ship_ts as timestamp) as ship_ts
from {{ ref('raw_shipments') }}
