-- singular test: every payment belongs to an order and the totals agree
select p.total, o.total
from (select sum(amount) as total from {{ ref('stg_payments') }}) p
cross join (select sum(amount) as total from {{ ref('orders') }}) o
where p.total != o.total
