{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id', on_schema_change='fail') }}
select id, name from {{ ref('m_table') }}
{% if is_incremental() %}
 where id >= (select coalesce(max(id), 0) from {{ this }})
{% endif %}
