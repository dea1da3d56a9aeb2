{#- event_time: dbt's microbatch models reading this view (orders_by_year) get each batch's rows only -#}
{{ config(event_time='order_date') }}
select
    cast(order_id as bigint) as order_id,
    cast(customer_id as bigint) as customer_id,
    cast(order_date as date) as order_date,
    status,
    cast(amount as decimal(10, 2)) as amount
from {{ ref('raw_orders') }}
