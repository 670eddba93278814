{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_ts',
          begin='2024-01-01', batch_size='day') }}
-- ref('src') is filtered to each day's batch by dbt (src has event_time); the run picks the days (--event-time-*)
select id, name, event_ts from {{ ref('src') }}
