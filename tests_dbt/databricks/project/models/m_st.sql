{{ config(materialized='streaming_table', tblproperties=var('st_properties', {}), schedule=var('st_schedule', none)) }}
select id, name from stream read_files('{{ var("landing") }}/clicks', format => 'json', schema => 'id BIGINT, name STRING')
