{% snapshot customers_snapshot %}
{{ config(unique_key='customer_id', strategy='check', check_cols=['country', 'last_name']) }}
select customer_id, first_name, last_name, country from {{ ref('stg_customers') }}
{% endsnapshot %}
