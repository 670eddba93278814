{{ config(materialized='table', event_time='event_ts') }}
-- batch 1 always; batch 2 (an update of id 2 and a new id 4) from the second round on
select id, name, cast(day as date) as day, cast(day as timestamp) as event_ts, batch from values
  (1, 'a', '2024-01-01', 1), (2, 'b', '2024-01-01', 1), (3, 'c', '2024-01-02', 1), (5, 'e', '2024-01-03', 1)
  {% if var('round') >= 2 %}, (2, 'B', '2024-01-01', 2), (4, 'd', '2024-01-02', 2){% endif %}
  as t(id, name, day, batch)
