{#- A model contract on a Paimon table: the query's columns and types are checked before anything
    is written; the primary_key constraint is the Paimon primary key, not_null makes the column
    NOT NULL in Paimon. One customer_id per row: the latest version from the snapshot. -#}
{{ config(materialized='paimon_pk') }}
select customer_id, concat(first_name, ' ', last_name) as full_name
from {{ ref('customers') }}
