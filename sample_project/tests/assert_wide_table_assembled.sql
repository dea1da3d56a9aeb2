-- orders_wide holds each source's latest state per order: order 2 paid and delivered,
-- order 5 refunded (its latest payment event, although it came first in the file).
select * from {{ ref('order_facts') }}
where (order_id = 2 and not (pay_status = 'paid' and ship_status = 'delivered' and status = 'shipped'))
   or (order_id = 5 and pay_status <> 'refunded')
   or (order_id = 6 and pay_status is not null)
