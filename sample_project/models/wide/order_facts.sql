{#- Three models assemble one wide Paimon table (orders_wide), each owning its columns through a
    sequence group: a late or out-of-order update of one source never overwrites another's. -#}
{{ config(materialized='partial_update', target='orders_wide', primary_key='order_id',
          sequence_groups={'order_updated_at': ['customer_id', 'order_date', 'status', 'amount']},
          buckets=2) }}
select order_id, customer_id, order_date, status, amount,
       cast(order_date as timestamp) as order_updated_at
from {{ ref('stg_orders') }}
