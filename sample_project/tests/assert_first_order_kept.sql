-- first-row keeps customer 1's first order (order 1 on 2024-03-01), not the later order 4.
select * from {{ ref('first_orders') }} where customer_id = 1 and first_order_id <> 1
