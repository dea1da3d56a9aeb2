select
    cast(customer_id as bigint) as customer_id,
    first_name,
    last_name,
    cast(updated_at as timestamp) as updated_at
from {{ ref('raw_customers') }}
