-- Customer 3 was updated on 2024-03-05: the merged table must hold that version only.
select * from {{ ref('customers') }}
where customer_id = 3 and last_name <> 'Payne'
