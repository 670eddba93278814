{{ config(materialized='table') }}
select cast(id as int) as id, name, {{ function('f_double') }}(id) as doubled from {{ ref('src') }} where batch = 1
