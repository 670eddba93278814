{{ config(materialized='incremental', incremental_strategy='replace_where',
          incremental_predicates=["day = date'2024-01-02'"]) }}
select id, name, day from {{ ref('src') }}
{% if is_incremental() %} where day = date'2024-01-02' and batch = 2 {% else %} where batch = 1 {% endif %}
