{#- Payments arrive out of order (order 5: refunded before paid in the file): the pay_ts sequence
    group keeps the latest payment state. -#}
{{ config(materialized='partial_update', target='orders_wide', primary_key='order_id',
          sequence_groups={'pay_ts': ['paid_amount', 'pay_status']}, buckets=2) }}
select cast(order_id as bigint) as order_id, cast(paid_amount as decimal(10, 2)) as paid_amount,
       pay_status, cast(pay_ts as timestamp) as pay_ts
from {{ ref('raw_payments') }}
