{#-
  materialized='streaming_table' for dbt-spark against sluicegate, with dbt-databricks' configs:

    {{ config(materialized='streaming_table',
              tblproperties={'pipelines.reset.allowed': 'true'},
              on_configuration_change='apply') }}      {# apply (default) | continue | fail #}
    select ... from stream read_files('/landing/orders', format => 'json', schema => '...')

  Every run sends `CREATE OR REFRESH STREAMING TABLE ... AS <sql>`: sluicegate compares the definition with the
  stored one and goes on from the checkpoint, goes on with the new query for new input, or starts over, as the change
  allows. Then `REFRESH STREAMING TABLE` returns once the stream has processed every file that was there, so the
  tests and models after it see the data. `--full-refresh` adds `REFRESH STREAMING TABLE ... FULL` (the table empties
  in one Delta commit and all input is processed again; refused when 'pipelines.reset.allowed' = 'false').
  A table or view of the same name that is not a streaming table is dropped first, as dbt does for a changed
  materialization. `schedule` is refused for now: sluicegate's streaming tables run continuously.
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
  {%- if config.get('schedule') is not none -%}
    {{ exceptions.raise_compiler_error("sluicegate runs streaming tables continuously: leave out `schedule` (schedules are not available yet)") }}
  {%- endif -%}
  {%- set create_sql = sluicegate.create_streaming_table_sql(target_relation, sql) -%}

  {{ run_hooks(pre_hooks) }}

  {%- set stored = none -%}
  {%- if existing_relation is not none -%}
    {%- set stored = sluicegate.stored_definition(existing_relation) -%}
    {%- if stored is none -%}
      {{ log("sluicegate: " ~ existing_relation ~ " is not a streaming table; dropping it", info=True) }}
      {{ adapter.drop_relation(existing_relation) }}
    {%- endif -%}
  {%- endif -%}

  {%- set changed = stored is not none and sluicegate.normalised(stored) != sluicegate.normalised(create_sql) -%}
  {%- if changed and on_change == 'fail' -%}
    {{ exceptions.raise_compiler_error("the definition of " ~ target_relation ~ " changed and on_configuration_change is 'fail'") }}
  {%- endif -%}

  {%- set full_refresh = should_full_refresh() and stored is not none -%}
  {%- set define = stored is none or (changed and on_change == 'apply') -%}
  {%- if changed and not define -%}
    {{ log("sluicegate: the definition of " ~ target_relation ~ " changed; on_configuration_change is 'continue', so it is kept", info=True) }}
  {%- endif -%}
  {%- call statement('main') -%}
    {%- if define -%}
      {{ create_sql }}
    {%- else -%}
      refresh streaming table {{ target_relation }}{{ " full" if full_refresh }}
    {%- endif -%}
  {%- endcall -%}
  {%- if define -%}
    {#- a new or redefined table: wait until it has processed what landed (emptied first on --full-refresh) -#}
    {%- call statement('refresh') -%}
      refresh streaming table {{ target_relation }}{{ " full" if full_refresh }}
    {%- endcall -%}
  {%- endif -%}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}


{% macro create_streaming_table_sql(relation, sql) -%}
  {%- set tblproperties = config.get('tblproperties') or {} -%}
  create or refresh streaming table {{ relation }}
  {%- if model.description %}
  comment '{{ model.description | replace("\\", "\\\\") | replace("'", "\\'") }}'
  {%- endif %}
  {%- if tblproperties %}
  tblproperties ({% for key, value in tblproperties.items() %}'{{ key }}' = '{{ value }}'{{ ", " if not loop.last }}{% endfor %})
  {%- endif %}
  as
  {{ sql }}
{%- endmacro %}


{% macro stored_definition(relation) -%}
  {#- The CREATE statement sluicegate stored for a streaming table, or none when `relation` is not one. -#}
  {%- set listed = run_query("show streaming tables in " ~ relation.schema ~ " like '" ~ relation.identifier ~ "'") -%}
  {%- if listed | length == 0 -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set described = run_query("describe streaming table " ~ relation) -%}
  {%- for row in described -%}
    {%- if row[0] == 'Definition' -%}
      {{ return(row[1] or '') }}
    {%- endif -%}
  {%- endfor -%}
  {{ return('') }}
{%- endmacro %}


{% macro normalised(text) -%}
  {#- A definition without dbt's leading query comment, in lower case with single spaces: what a change means. -#}
  {%- set text = text.strip() -%}
  {%- if text.startswith('/*') and '*/' in text -%}
    {%- set text = text.split('*/', 1)[1] -%}
  {%- endif -%}
  {{ return(' '.join(text.lower().split())) }}
{%- endmacro %}
