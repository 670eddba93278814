"""What the gateway's JVM did while a call ran: the Spark jobs submitted and the query plans made, counted by the JVM
itself (`DAGScheduler.numTotalJobs`; every Dataset and `spark.sql` makes a `QueryExecution`, which takes the next
id). For tests that show something runs no Spark job (the metadata RPCs, the result cache's answers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from py4j.java_gateway import JavaClass


def spark_work(spark: Any) -> tuple[int, int]:
    """(Spark jobs submitted, QueryExecutions made) in the JVM so far. Both counters move synchronously, on the
    thread that submits the job or makes the plan; reading the second takes one id."""
    jobs = int(spark.sparkContext._jsc.sc().dagScheduler().numTotalJobs())
    module = getattr(JavaClass("org.apache.spark.sql.execution.QueryExecution$",
                               spark.sparkContext._gateway._gateway_client), "MODULE$")
    plans = int(getattr(module, "org$apache$spark$sql$execution$QueryExecution$$nextExecutionId")())
    return jobs, plans


def work_during(spark: Any, call: Callable[[], Any]) -> tuple[int, int, Any]:
    """(jobs, plans, result) of `call`: what the JVM counted while it ran."""
    jobs, plans = spark_work(spark)
    result = call()
    jobs_after, plans_after = spark_work(spark)
    return jobs_after - jobs, plans_after - plans - 1, result
