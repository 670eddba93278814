-- Revenue per customer: a materialized view over silver, kept equal to the aggregate. It refreshes whenever silver
-- gets a new version (so files that land reach gold between dbt runs), and each dbt run REFRESHes it too (nothing is
-- written when silver did not move).
{{ config(materialized='materialized_view', schedule={'on_update': true}) }}
select customer, count(*) as orders, sum(amount) as revenue
from {{ ref('silver_orders') }}
group by customer
