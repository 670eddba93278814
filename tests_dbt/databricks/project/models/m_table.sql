{{ config(materialized='table') }}
select * from values (1, 'a'), (2, 'b'), ({{ var('third_id', 3) }}, 'c') as t(id, name)
