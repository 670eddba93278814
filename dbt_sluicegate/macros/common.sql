{#- Macros shared by the streaming_table and materialized_view materializations: what sluicegate stored for an
    object (read back as dbt-databricks reads it), the clauses written for dbt-databricks' configs, and how a change of
    each is told apart. `kind` is 'streaming table' or 'materialized view', as the statements spell it. -#}

{% macro stored_config(relation, kind='streaming table') -%}
  {#- What sluicegate stored for a streaming table or materialized view, from DESCRIBE TABLE EXTENDED as
      dbt-databricks reads it: the query (`View Text`), comment, table properties, `Refresh Schedule`, `Refresh
      Policy` and the partition columns; none when `relation` is not of that kind. -#}
  {%- if not sluicegate.is_kind(relation, kind) -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set described = run_query("describe table extended " ~ relation) -%}
  {%- set stored = {'query': '', 'comment': none, 'properties': '', 'schedule': 'MANUAL', 'policy': none,
                    'partition_by': []} -%}
  {%- set section = {'name': 'columns'} -%}
  {%- for row in described -%}
    {%- if row[0] == '# Partition Information' -%}
      {%- do section.update({'name': 'partitions'}) -%}
    {%- elif row[0] == '' or row[0].startswith('# Detailed') -%}
      {%- do section.update({'name': 'details'}) -%}
    {%- elif section.name == 'partitions' and not row[0].startswith('#') -%}
      {%- do stored.partition_by.append(row[0]) -%}
    {%- elif section.name == 'details' -%}
      {%- set key = {'View Text': 'query', 'Comment': 'comment', 'Table Properties': 'properties',
                     'Refresh Schedule': 'schedule', 'Refresh Policy': 'policy'}.get(row[0]) -%}
      {%- if key -%}
        {%- do stored.update({key: row[1]}) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(stored) }}
{%- endmacro %}


{% macro is_kind(relation, kind) -%}
  {#- Whether `relation` is a streaming table / materialized view: dbt-spark's relation cache calls both a table
      (it tells only VIEW apart), so SHOW STREAMING TABLES / SHOW MATERIALIZED VIEWS says which. -#}
  {%- set listed = run_query("show " ~ kind ~ "s in " ~ relation.schema ~ " like '" ~ relation.identifier ~ "'") -%}
  {{ return(listed | selectattr(1, 'equalto', relation.identifier | lower) | list | length > 0) }}
{%- endmacro %}


{% macro drop_existing(relation) -%}
  {#- Drop an object that is in the way of another materialization, with the DROP its kind takes (DROP TABLE refuses
      a materialized view, as on Databricks). -#}
  {%- if relation.type != 'view' and sluicegate.is_kind(relation, 'materialized view') -%}
    {%- call statement('drop_existing') -%}
      drop materialized view if exists {{ relation }}
    {%- endcall -%}
  {%- else -%}
    {{ adapter.drop_relation(relation) }}
  {%- endif -%}
{%- endmacro %}


{% macro comment_clause(description) -%}
  {%- if description -%}
    comment '{{ description | replace("\\", "\\\\") | replace("'", "\\'") }}'
  {%- endif -%}
{%- endmacro %}


{% macro tblproperties_clause(tblproperties) -%}
  {%- if tblproperties -%}
    tblproperties ({% for key, value in tblproperties.items() %}'{{ key }}' = '{{ value }}'{{ ", " if not loop.last }}{% endfor %})
  {%- endif -%}
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
      {'on_update': true, 'at_most_every': 'n SECONDS|MINUTES|HOURS'}; none: no schedule (a streaming table runs
      continuously, a materialized view is refreshed by REFRESH only). -#}
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


{% macro alter_schedule_sql(relation, stored, schedule, kind='streaming table') -%}
  {#- The ALTER that turns the stored schedule into the configured one, never touching the query. -#}
  {%- if schedule.kind is none -%}
    alter {{ kind }} {{ relation }} drop schedule
  {%- elif stored == 'MANUAL' -%}
    alter {{ kind }} {{ relation }} add {{ schedule.clause }}
  {%- else -%}
    alter {{ kind }} {{ relation }} alter {{ schedule.clause }}
  {%- endif -%}
{%- endmacro %}


{% macro normalised(text) -%}
  {#- A definition without its leading comments (dbt's query comment, a model's `-- ...` lines: sluicegate stores
      the query from its first token), in lower case with single spaces: what a change means. -#}
  {%- set state = namespace(text=(text or '').strip()) -%}
  {%- for _ in range(100) -%}
    {%- if state.text.startswith('/*') and '*/' in state.text -%}
      {%- set state.text = state.text.split('*/', 1)[1].strip() -%}
    {%- elif state.text.startswith('--') -%}
      {%- set state.text = (state.text.split('\n', 1)[1] if '\n' in state.text else '').strip() -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(' '.join(state.text.lower().split())) }}
{%- endmacro %}


{#- The end of both materializations: `grants` as dbt-databricks applies them (SHOW GRANTS ON, then GRANT / REVOKE
    the difference), then the model's post-hooks. -#}
{% macro apply_grants_and_post_hooks(target_relation, existing_relation) -%}
  {%- do apply_grants(target_relation, config.get('grants'),
                      should_revoke=should_revoke(existing_relation, full_refresh_mode=True)) -%}
  {{ run_hooks(post_hooks) }}
{%- endmacro %}
