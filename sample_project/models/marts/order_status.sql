-- depends_on: {{ ref('order_payments') }}
-- depends_on: {{ ref('order_shipments') }}
{#- Reads the assembled wide table after all three writers ran. -#}
{{ config(materialized='table') }}
select order_id, status, pay_status, ship_status,
       case when ship_status = 'delivered' then 'done'
            when pay_status = 'paid' then 'paid'
            else 'open' end as stage
from {{ ref('order_facts') }}
