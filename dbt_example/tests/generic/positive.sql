{#- A generic test: the rows where `column_name` is not greater than zero (none, for the test to pass). -#}
{% test positive(model, column_name) %}
select * from {{ model }} where {{ column_name }} <= 0
{% endtest %}
