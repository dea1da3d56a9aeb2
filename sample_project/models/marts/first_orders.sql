{#- The first-row engine: the first order seen per customer is kept forever. -#}
{{ config(materialized='paimon_pk', primary_key='customer_id', merge_engine='first-row') }}
select customer_id, order_id as first_order_id, order_date as first_order_date
from {{ ref('stg_orders') }}
order by order_date, order_id
