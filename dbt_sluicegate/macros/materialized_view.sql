{#-
  materialized='materialized_view' for dbt-spark against sluicegate, with dbt-databricks' configs:

    config(materialized='materialized_view',
           partition_by=['country'],                  -- a column name or a list
           tblproperties={'team': 'finance'},
           refresh_policy='auto',                     -- auto (default) | incremental | incremental strict | full
           schedule={'on_update': true, 'at_most_every': '5 MINUTES'},  -- or {'cron': '0 0 6 * * ?',
                                                      -- 'time_zone_value': 'UTC'} or {'every': '2 HOURS'}; none:
                                                      -- refreshed by REFRESH (each dbt run) only
           on_configuration_change='apply')           -- apply (default) | continue | fail
    select country, count(*) as orders from ref('silver_orders') group by country

  The first run sends `CREATE MATERIALIZED VIEW ... AS <sql>` (the result is computed within it). Later runs compare
  the stored view with the model part by part, as dbt-databricks does, from `DESCRIBE TABLE EXTENDED`: the query
  (`View Text`), comment, table properties, partition columns, `Refresh Policy` and `Refresh Schedule`. Unchanged:
  `REFRESH MATERIALIZED VIEW` (incremental when it can be; no commit when no input moved). A changed query, comment,
  property, partitioning or policy: `CREATE OR REPLACE MATERIALIZED VIEW` (recomputed in one commit, schedule
  included). A changed schedule alone: `ALTER MATERIALIZED VIEW ... {ADD | ALTER} <schedule> | DROP SCHEDULE`, then
  the REFRESH. `on_configuration_change='continue'` warns and keeps the stored definition (and refreshes it), 'fail'
  stops the run. `--full-refresh` is CREATE OR REPLACE (recomputed whole), as dbt-databricks replaces. A table, view
  or streaming table of the same name is dropped first, as dbt does for a changed materialization.
-#}
{% materialization materialized_view, adapter='spark' %}
  {%- set identifier = model['alias'] -%}
  {#- 'table': what dbt-spark's relation cache calls it on the next run (SHOW TABLE EXTENDED tells only VIEW apart) -#}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database,
                                                type='table') -%}
  {%- set existing_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set on_change = config.get('on_configuration_change', 'apply') -%}
  {%- if on_change not in ['apply', 'continue', 'fail'] -%}
    {{ exceptions.raise_compiler_error("on_configuration_change must be apply, continue or fail, not '"
                                       ~ on_change ~ "'") }}
  {%- endif -%}
  {%- set schedule = sluicegate.schedule_config(config.get('schedule')) -%}
  {%- set partition_by = sluicegate.partition_columns(config.get('partition_by')) -%}
  {%- set policy = sluicegate.refresh_policy(config.get('refresh_policy')) -%}
  {%- set properties = config.get('tblproperties') or {} -%}

  {{ run_hooks(pre_hooks) }}

  {%- set stored = none -%}
  {%- if existing_relation is not none -%}
    {%- set stored = sluicegate.stored_config(existing_relation, 'materialized view') -%}
    {%- if stored is none -%}
      {{ log("sluicegate: " ~ existing_relation ~ " is not a materialized view; dropping it", info=True) }}
      {{ sluicegate.drop_existing(existing_relation) }}
    {%- endif -%}
  {%- endif -%}

  {%- set definition_changed = stored is not none and (
        sluicegate.normalised(stored['query']) != sluicegate.normalised(sql)
        or (stored['comment'] or '') != (model.description or '')
        or stored['properties'] != sluicegate.properties_text(properties)
        or stored['partition_by'] | map('lower') | list != partition_by | map('lower') | list
        or (stored['policy'] or 'AUTO') != policy) -%}
  {%- set schedule_changed = stored is not none and not sluicegate.same_schedule(stored['schedule'], schedule) -%}
  {%- set changed = definition_changed or schedule_changed -%}
  {%- set full_refresh = should_full_refresh() and stored is not none -%}
  {%- if changed and not full_refresh and on_change != 'apply' -%}
    {%- set message = "Configuration changes were identified and `on_configuration_change` was set to `"
                      ~ on_change ~ "` for `" ~ target_relation ~ "`" -%}
    {%- if on_change == 'fail' -%}
      {{ exceptions.raise_fail_fast_error(message) }}
    {%- endif -%}
    {{ exceptions.warn(message) }}
  {%- endif -%}
  {%- set or_replace = stored is not none and (full_refresh or (on_change == 'apply' and definition_changed)) -%}
  {%- set reschedule = not or_replace and on_change == 'apply' and schedule_changed -%}
  {#- the log lines dbt's own materialization writes (dbt-tests-adapter's materialized-view tests read them) -#}
  {%- if or_replace -%}
    {{ log("Applying REPLACE to: " ~ target_relation) }}
  {%- elif reschedule -%}
    {{ log("Applying ALTER to: " ~ target_relation) }}
  {%- endif -%}

  {%- call statement('main') -%}
    {%- if stored is none or or_replace -%}
      {{ sluicegate.create_materialized_view_sql(target_relation, sql, or_replace, partition_by, policy,
                                                 schedule.clause) }}
    {%- elif reschedule -%}
      {{ sluicegate.alter_schedule_sql(target_relation, stored['schedule'], schedule, 'materialized view') }}
    {%- else -%}
      refresh materialized view {{ target_relation }}
    {%- endif -%}
  {%- endcall -%}
  {%- if reschedule -%}
    {%- call statement('refresh') -%}
      refresh materialized view {{ target_relation }}
    {%- endcall -%}
  {%- endif -%}

  {{ sluicegate.apply_grants_and_post_hooks(target_relation, existing_relation) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{% macro create_materialized_view_sql(relation, sql, or_replace, partition_by, policy, schedule_clause) -%}
  create {{ "or replace " if or_replace }}materialized view {{ relation }}
  {% if partition_by -%}
    partitioned by ({{ partition_by | join(', ') }})
  {%- endif %}
  {{ sluicegate.comment_clause(model.description) }}
  {{ sluicegate.tblproperties_clause(config.get('tblproperties')) }}
  refresh policy {{ policy }}
  {{ schedule_clause }}
  as
  {{ sql }}
{%- endmacro %}


{% macro partition_columns(partition_by) -%}
  {#- dbt-spark's `partition_by`: one column name or a list of them. -#}
  {%- if partition_by is none -%}
    {{ return([]) }}
  {%- elif partition_by is string -%}
    {{ return([partition_by]) }}
  {%- endif -%}
  {{ return(partition_by | list) }}
{%- endmacro %}


{% macro refresh_policy(policy) -%}
  {#- dbt-databricks' `refresh_policy` as the REFRESH POLICY words (and the `Refresh Policy` row DESCRIBE shows). -#}
  {%- set words = ' '.join((policy or 'auto').upper().split()) -%}
  {%- if words not in ['AUTO', 'INCREMENTAL', 'INCREMENTAL STRICT', 'FULL'] -%}
    {{ exceptions.raise_compiler_error("refresh_policy must be auto, incremental, incremental strict or full, not '"
                                       ~ policy ~ "'") }}
  {%- endif -%}
  {{ return(words) }}
{%- endmacro %}
