{#- A Paimon primary-key table: customer 3 arrives twice; the deduplicate engine keeps the row
    with the latest updated_at (sequence_field), whatever order the rows come in. -#}
{{ config(
    materialized='paimon_pk',
    primary_key='customer_id',
    sequence_field='updated_at',
    buckets=2
) }}
select customer_id, first_name, last_name, updated_at
from {{ ref('stg_customers') }}
