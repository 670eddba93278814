-- Paid orders with a customer and a positive amount, cleaned; read commit by commit from bronze.
{{ config(materialized='streaming_table') }}
select order_id, lower(trim(customer)) as customer, try_cast(amount as decimal(10, 2)) as amount
from stream({{ ref('bronze_orders') }})
where status = 'paid' and customer is not null and try_cast(amount as decimal(10, 2)) > 0
