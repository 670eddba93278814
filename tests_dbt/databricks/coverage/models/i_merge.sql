{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id',
          merge_exclude_columns=['first_batch']) }}
select id, name, batch as first_batch from {{ ref('src') }} where batch = {{ 2 if is_incremental() else 1 }}
