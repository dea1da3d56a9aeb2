{{ config(materialized='incremental', incremental_strategy='merge', unique_key='customer_id') }}
select customer_id, sum(amount) as revenue, max(order_date) as last_order_date
from {{ ref('orders') }}
where status in ('completed', 'shipped')
{% if is_incremental() %}
  and order_date >= (select coalesce(max(last_order_date), date'1900-01-01') from {{ this }})
{% endif %}
group by customer_id
