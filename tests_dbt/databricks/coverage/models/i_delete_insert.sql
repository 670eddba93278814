{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='id') }}
select id, name from {{ ref('src') }} where batch = {{ 2 if is_incremental() else 1 }}
