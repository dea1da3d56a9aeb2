-- A scalable append table (buckets=-1): an event log. Every run appends the run's events as one
-- Paimon commit; Spark tasks write their files in parallel, nothing is shuffled.
{{ config(materialized='paimon_append', partition_by='order_date') }}
select
    order_id,
    customer_id,
    order_date,
    concat('order_', status) as event,
    current_timestamp() as loaded_at
from {{ ref('stg_orders') }}
