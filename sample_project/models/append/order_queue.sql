-- A queue table: 2 buckets by customer_id. Each customer's events land in one bucket and are
-- read back in the order they were written, like a partitioned message topic.
{{ config(materialized='paimon_append', buckets=2, bucket_key='customer_id') }}
select customer_id, order_id, status, amount
from {{ ref('stg_orders') }}
order by order_id
