{#- dbt's incremental merge on a Paimon table: unique_key is the primary key, each run merges
    the customers whose orders changed as one commit; `first_order_date` keeps its stored
    value for customers already in the table (merge_update_columns). -#}
{{ config(materialized='incremental', unique_key='customer_id',
          merge_update_columns=['orders', 'total_amount', 'last_order_date']) }}
select customer_id,
       count(*) as orders,
       sum(amount) as total_amount,
       min(order_date) as first_order_date,
       max(order_date) as last_order_date
from {{ ref('stg_orders') }}
group by customer_id
