{#- The aggregation engine: every run adds its sales to the running totals per product. -#}
{{ config(materialized='paimon_pk', primary_key='product_id', merge_engine='aggregation',
          aggregations={'units_sold': 'sum', 'revenue': 'sum', 'max_price': 'max'}) }}
select cast(product_id as bigint) as product_id,
       cast(quantity as bigint) as units_sold,
       cast(quantity * price as decimal(12, 2)) as revenue,
       cast(price as decimal(10, 2)) as max_price
from {{ ref('raw_order_items') }}
