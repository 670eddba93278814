{#- dbt (1.8+) takes a package's override of a built-in materialization only when the project asks for it: this one
    hands `materialized='materialized_view'` to sluicegate's package. -#}
{% materialization materialized_view, adapter='spark' %}
  {{ return(sluicegate.materialization_materialized_view_spark()) }}
{% endmaterialization %}
