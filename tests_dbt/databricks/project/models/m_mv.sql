{{ config(materialized='materialized_view', tblproperties=var('mv_properties', {})) }}
select name, count(*) as clicks from {{ ref('m_st') }} group by name
