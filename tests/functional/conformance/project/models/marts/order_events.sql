{{ config(materialized='paimon_append') }}
select order_id, status, current_date() as seen_on from {{ ref('orders') }}
