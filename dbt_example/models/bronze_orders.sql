-- Every order file as it landed, each column a string: nothing is lost, not even a malformed row.
{{ config(materialized='streaming_table') }}
select *
from stream read_files('{{ var("landing") }}/orders', format => 'json',
                       schema => 'order_id STRING, customer STRING, amount STRING, status STRING')
