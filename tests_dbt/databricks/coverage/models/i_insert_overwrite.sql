{{ config(materialized='incremental', incremental_strategy='insert_overwrite', partition_by=['day']) }}
select id, name, day from {{ ref('src') }} where batch = {{ 2 if is_incremental() else 1 }}
