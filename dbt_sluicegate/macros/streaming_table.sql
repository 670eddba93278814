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
  processed again; refused when 'pipelines.reset.allowed' = 'false'). A table or view of the same name that is not a
  streaming table is dropped first, as dbt does for a changed materialization.
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
      {{ adapter.drop_relation(existing_relation) }}
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

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{% macro create_streaming_table_sql(relation, sql, schedule_clause) -%}
  {%- set tblproperties = config.get('tblproperties') or {} -%}
  create or refresh streaming table {{ relation }}
  {%- if model.description %}
  comment '{{ model.description | replace("\\", "\\\\") | replace("'", "\\'") }}'
  {%- endif %}
  {%- if tblproperties %}
  tblproperties ({% for key, value in tblproperties.items() %}'{{ key }}' = '{{ value }}'{{ ", " if not loop.last }}{% endfor %})
  {%- endif %}
  {%- if schedule_clause %}
  {{ schedule_clause }}
  {%- endif %}
  as
  {{ sql }}
{%- endmacro %}


{% macro stored_config(relation) -%}
  {#- What sluicegate stored for a streaming table, from DESCRIBE TABLE EXTENDED as dbt-databricks reads it: the query
      (`View Text`), comment, table properties and `Refresh Schedule`; none when `relation` is not a streaming table. -#}
  {%- set listed = run_query("show streaming tables in " ~ relation.schema ~ " like '" ~ relation.identifier ~ "'") -%}
  {%- if listed | length == 0 -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set described = run_query("describe table extended " ~ relation) -%}
  {%- set stored = {'query': '', 'comment': none, 'properties': '', 'schedule': 'MANUAL'} -%}
  {%- for row in described -%}
    {%- set key = {'View Text': 'query', 'Comment': 'comment', 'Table Properties': 'properties',
                   'Refresh Schedule': 'schedule'}.get(row[0]) -%}
    {%- if key -%}
      {%- do stored.update({key: row[1]}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(stored) }}
{%- endmacro %}


{% macro properties_text(tblproperties) -%}
  {#- The `Table Properties` row DESCRIBE TABLE EXTENDED shows for these properties ('' for none). -#}
  {%- if not tblproperties -%}
    {{ return('') }}
  {%- endif -%}
  {%- set pairs = [] -%}
  {%- for key in tblproperties | sort -%}
    {%- do pairs.append(key ~ '=' ~ tblproperties[key]) -%}
  {%- endfor -%}
  {{ return('[' ~ pairs | join(', ') ~ ']') }}
{%- endmacro %}


{% macro schedule_config(schedule) -%}
  {#- dbt-databricks' `schedule` config as the clause to write and the `Refresh Schedule` text it reads back:
      {'cron': '<quartz>', 'time_zone_value': '<tz>'} | {'every': 'n HOURS|DAYS|WEEKS'} |
      {'on_update': true, 'at_most_every': 'n SECONDS|MINUTES|HOURS'}; none: no schedule (a continuous stream). -#}
  {%- if schedule is none -%}
    {{ return({'clause': '', 'kind': none, 'describe': 'MANUAL', 'cron': none, 'time_zone': none}) }}
  {%- endif -%}
  {%- if schedule is not mapping -%}
    {{ exceptions.raise_compiler_error("schedule must be a dict: {'cron': '0 0 6 * * ?', 'time_zone_value': 'UTC'}, {'every': '2 HOURS'} or {'on_update': true}") }}
  {%- endif -%}
  {%- if schedule.get('cron') -%}
    {%- set cron = schedule['cron'].split() | join(' ') -%}
    {%- set zone = schedule.get('time_zone_value') -%}
    {%- set clause = "schedule cron '" ~ cron ~ "'" ~ (" at time zone '" ~ zone ~ "'" if zone else "") -%}
    {{ return({'clause': clause, 'kind': 'cron', 'describe': "CRON '" ~ cron ~ "' AT TIME ZONE '" ~ zone ~ "'",
               'cron': cron, 'time_zone': zone}) }}
  {%- elif schedule.get('every') -%}
    {%- set parts = (schedule['every'] | string).split() -%}
    {%- if parts | length != 2 or not parts[0].isdigit() -%}
      {{ exceptions.raise_compiler_error("schedule every must read '<number> HOURS|DAYS|WEEKS', not '" ~ schedule['every'] ~ "'") }}
    {%- endif -%}
    {%- set unit = parts[1].upper().rstrip('S') ~ 'S' -%}
    {{ return({'clause': 'schedule every ' ~ parts[0] ~ ' ' ~ unit, 'kind': 'every',
               'describe': 'EVERY ' ~ (parts[0] | int) ~ ' ' ~ unit, 'cron': none, 'time_zone': none}) }}
  {%- elif schedule.get('on_update') -%}
    {%- set at_most = schedule.get('at_most_every') -%}
    {%- if not at_most -%}
      {{ return({'clause': 'trigger on update', 'kind': 'on_update', 'describe': 'TRIGGER ON UPDATE', 'cron': none,
                 'time_zone': none}) }}
    {%- endif -%}
    {%- set parts = (at_most | string).split() -%}
    {%- set factor = {'SECOND': 1, 'MINUTE': 60, 'HOUR': 3600}.get(parts[-1].upper().rstrip('S')) -%}
    {%- if parts | length != 2 or not parts[0].isdigit() or factor is none -%}
      {{ exceptions.raise_compiler_error("schedule at_most_every must read '<number> SECONDS|MINUTES|HOURS', not '" ~ at_most ~ "'") }}
    {%- endif -%}
    {{ return({'clause': 'trigger on update at most every interval ' ~ parts[0] ~ ' ' ~ parts[1],
               'kind': 'on_update', 'cron': none, 'time_zone': none,
               'describe': 'TRIGGER ON UPDATE AT MOST EVERY INTERVAL ' ~ ((parts[0] | int) * factor) ~ ' SECONDS'}) }}
  {%- endif -%}
  {{ exceptions.raise_compiler_error("schedule needs 'cron', 'every' or 'on_update', not " ~ schedule) }}
{%- endmacro %}


{% macro same_schedule(stored, schedule) -%}
  {#- Whether the stored `Refresh Schedule` is the configured one; a cron without time_zone_value took the session's
      zone at CREATE, so only the expression is compared then. -#}
  {%- if schedule.kind == 'cron' and not schedule.time_zone -%}
    {{ return(stored.startswith("CRON '" ~ schedule.cron ~ "' AT TIME ZONE ")) }}
  {%- endif -%}
  {{ return(stored == schedule.describe) }}
{%- endmacro %}


{% macro alter_schedule_sql(relation, stored, schedule) -%}
  {#- The ALTER that turns the stored schedule into the configured one, never touching the query. -#}
  {%- if schedule.kind is none -%}
    alter streaming table {{ relation }} drop schedule
  {%- elif stored == 'MANUAL' -%}
    alter streaming table {{ relation }} add {{ schedule.clause }}
  {%- else -%}
    alter streaming table {{ relation }} alter {{ schedule.clause }}
  {%- endif -%}
{%- endmacro %}


{% macro normalised(text) -%}
  {#- A definition without dbt's leading query comment, in lower case with single spaces: what a change means. -#}
  {%- set text = text.strip() -%}
  {%- if text.startswith('/*') and '*/' in text -%}
    {%- set text = text.split('*/', 1)[1] -%}
  {%- endif -%}
  {{ return(' '.join(text.lower().split())) }}
{%- endmacro %}
