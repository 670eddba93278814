{{ config(materialized='view') }}
select id, upper(name) as name from {{ ref('m_table') }}
