select
    id as customer_id,
    first_name,
    last_name,
    signup_date,
    coalesce(country, 'unknown') as country
from {{ source('ecom', 'raw_customers') }}
