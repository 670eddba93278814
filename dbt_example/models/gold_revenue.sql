-- Revenue per customer, kept equal to the aggregate over silver (each micro-batch MERGEs the customers it changed).
{{ config(materialized='streaming_table') }}
select customer, count(*) as orders, sum(amount) as revenue
from stream({{ ref('silver_orders') }})
group by customer
