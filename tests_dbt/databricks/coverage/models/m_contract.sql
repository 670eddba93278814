{{ config(materialized='table', persist_docs={'relation': true, 'columns': true},
          grants={'select': [var('reader')]}) }}
select cast(id as int) as id, name, {{ function('f_double') }}(id) as doubled from {{ ref('src') }} where batch = 1
