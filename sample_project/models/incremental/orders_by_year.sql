{#- dbt's microbatch on a Paimon table: one batch per year of order_date, each ONE commit that
    replaces exactly its year (re-running a batch never duplicates rows). -#}
{{ config(materialized='incremental', incremental_strategy='microbatch',
          event_time='order_ts', batch_size='year', begin='2024-01-01') }}
select order_id, customer_id, status, amount, cast(order_date as timestamp) as order_ts
from {{ ref('stg_orders') }}
