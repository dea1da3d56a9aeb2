{#- Deletion vectors (Paimon's merge-on-write mode): each run's compaction marks the rows it
    supersedes in deletion vectors, so readers skip them instead of merging sorted runs. -#}
{{ config(materialized='paimon_pk', primary_key='order_id', buckets=2, deletion_vectors=true) }}
select order_id, customer_id, status, amount
from {{ ref('stg_orders') }}
