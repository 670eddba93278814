{#-
  materialized='streaming_table' for dbt-spark against sluicegate, with dbt-databricks' configs:

    {{ config(materialized='streaming_table',
              tblproperties={'pipelines.reset.allowed': 'true'},
              schedule={'cron': '0 0 6 * * ?', 'time_zone_value': 'Europe/Paris'},   {# or {'every': '2 HOURS'},
                                                      {'on_update': true, 'at_most_every': '15 MINUTES'} #}
              on_configuration_change='apply') }}      {# apply (default) | continue | fail #}
    select ... from stream read_files('/landing/orders', format => 'json', schema => '...')

  A new table is made with `CREATE OR REFRESH STREAMING TABLE ... [SCHEDULE ...] AS <sql>`. On later runs the stored
  table is compared with the model part by part, as dbt-databricks does, from `DESCRIBE TABLE EXTENDED`: the query
  (`View Text`), comment and table properties, and `Refresh Schedule`. A changed query, comment or property sends the
  CREATE OR REFRESH again (sluicegate goes on from the checkpoint, goes on with the new query for new input, or starts
  over, as the change allows; the schedule is set with it); a changed schedule alone sends `ALTER STREAMING TABLE ...
  {ADD | ALTER} SCHEDULE ...` or `... DROP SCHEDULE`, which never restarts the query. Then `REFRESH STREAMING TABLE`
  returns once the table has processed every file that was there, so the tests and models after it see the data.
  `--full-refresh` adds `REFRESH STREAMING TABLE ... FULL` (the table empties in one Delta commit and all input is
  processed again; refused when 'pipelines.reset.allowed' = 'false'). A table, view or materialized view of the same
  name is dropped first (with the DROP its kind takes), as dbt does for a changed materialization.
-#}
{% materialization streaming_table, adapter='spark' %}
  {%- set identifier = model['alias'] -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database,
                                                type='table') -%}
  {%- set existing_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set on_change = config.get('on_configuration_change', 'apply') -%}
  {%- if on_change not in ['apply', 'continue', 'fail'] -%}
    {{ exceptions.raise_compiler_error("on_configuration_change must be apply, continue or fail, not '" ~ on_change ~ "'") }}
  {%- endif -%}
  {%- set schedule = sluicegate.schedule_config(config.get('schedule')) -%}
  {%- set create_sql = sluicegate.create_streaming_table_sql(target_relation, sql, schedule.clause) -%}

  {{ run_hooks(pre_hooks) }}

  {%- set stored = none -%}
  {%- if existing_relation is not none -%}
    {%- set stored = sluicegate.stored_config(existing_relation) -%}
    {%- if stored is none -%}
      {{ log("sluicegate: " ~ existing_relation ~ " is not a streaming table; dropping it", info=True) }}
      {{ sluicegate.drop_existing(existing_relation) }}
    {%- endif -%}
  {%- endif -%}

  {%- set definition_changed = stored is not none and (
        sluicegate.normalised(stored['query']) != sluicegate.normalised(sql)
        or (stored['comment'] or '') != (model.description or '')
        or stored['properties'] != sluicegate.properties_text(config.get('tblproperties') or {})) -%}
  {%- set schedule_changed = stored is not none and not sluicegate.same_schedule(stored['schedule'], schedule) -%}
  {%- set changed = definition_changed or schedule_changed -%}
  {%- if changed and on_change == 'fail' -%}
    {{ exceptions.raise_compiler_error("the definition of " ~ target_relation ~ " changed and on_configuration_change is 'fail'") }}
  {%- endif -%}

  {%- set full_refresh = should_full_refresh() and stored is not none -%}
  {%- set define = stored is none or (definition_changed and on_change == 'apply') -%}
  {%- set reschedule = not define and schedule_changed and on_change == 'apply' -%}
  {%- if changed and on_change == 'continue' -%}
    {{ log("sluicegate: the definition of " ~ target_relation ~ " changed; on_configuration_change is 'continue', so it is kept", info=True) }}
  {%- endif -%}
  {%- call statement('main') -%}
    {%- if define -%}
      {{ create_sql }}
    {%- elif reschedule -%}
      {{ sluicegate.alter_schedule_sql(target_relation, stored['schedule'], schedule) }}
    {%- else -%}
      refresh streaming table {{ target_relation }}{{ " full" if full_refresh }}
    {%- endif -%}
  {%- endcall -%}
  {%- if define or reschedule -%}
    {#- a new, redefined or rescheduled table: wait until it has processed what landed (emptied first on
        --full-refresh) -#}
    {%- call statement('refresh') -%}
      refresh streaming table {{ target_relation }}{{ " full" if full_refresh }}
    {%- endcall -%}
  {%- endif -%}

  {{ sluicegate.apply_grants_and_post_hooks(target_relation, existing_relation) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{% macro create_streaming_table_sql(relation, sql, schedule_clause) -%}
  create or refresh streaming table {{ relation }}
  {{ sluicegate.comment_clause(model.description) }}
  {{ sluicegate.tblproperties_clause(config.get('tblproperties')) }}
  {{ schedule_clause }}
  as
  {{ sql }}
{%- endmacro %}
