{% snapshot snap_orders %}
{{ config(unique_key='id', strategy='check', check_cols=['status']) }}
-- the second round ships order 1
select id, case when id = 1 and {{ var('round') }} >= 2 then 'shipped' else status end as status
from {{ ref('s_orders') }}
{% endsnapshot %}
