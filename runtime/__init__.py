"""What starts and watches Spark: the session factory, batch SQL execution and result streaming."""
