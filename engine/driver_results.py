"""Results Spark already holds in the driver, turned into Arrow there, without a job.

`SELECT 1` (every connection pool's liveness query), `SELECT current_date()`, `VALUES ...` and a command's output
(`SHOW ...`, `SET`) need no executor: Spark's optimizer has already folded a projection of literals over no table
into its values, `VALUES` is a `LocalRelation` of rows, and a command ran when it was analysed. Spark Connect answers
such plans in the driver for the same reason; PySpark's Arrow collect would still schedule a job (~12 ms of this
machine's ~26 ms per `SELECT 1`). The rows are converted by Spark's own `ArrowConverters`, with the session's time
zone, so the batches are the ones a job would have produced.

Only plans whose rows exist before execution qualify: a projection of anything but literals (`rand()`, a column)
runs as a job, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sluicegate.engine.jvm_objects import java_class, jvm_constant
from sluicegate.engine.sessions import session_conf

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_MAX_ROWS_PER_BATCH = 10_000
_MAX_BATCH_BYTES = 64 * 1024 * 1024


def _literal_projection(plan: Any, name: str) -> Any | None:
    """`Project [literal AS name, ...]` over `OneRowRelation` (the optimizer folded every expression): its project
    list, else None. `name`: the plan's node name, already asked."""
    if name != "Project" or plan.child().nodeName() != "OneRowRelation":
        return None
    expressions = plan.projectList()
    for i in range(expressions.size()):
        expression = expressions.apply(i)
        if expression.nodeName() != "Alias" or expression.child().nodeName() != "Literal":
            return None
    return expressions


def _driver_rows(df: DataFrame, plan: Any) -> Any | None:
    """A Scala iterator over the optimized plan's rows if the driver already has them, else None."""
    name = plan.nodeName()
    if name == "LocalRelation" and not plan.isStreaming():
        return plan.data().iterator()
    if name == "CommandResult":
        return plan.rows().iterator()
    expressions = _literal_projection(plan, name)
    if expressions is not None:
        # py4j asks the JVM what a static member is on every attribute access: the members are kept (jvm_objects.py)
        create = jvm_constant(df, "createProjection", lambda d: java_class(
            d, "org.apache.spark.sql.catalyst.expressions.InterpretedUnsafeProjection").createProjection)
        empty = jvm_constant(df, "InternalRow.empty",
                          lambda d: java_class(d, "org.apache.spark.sql.catalyst.InternalRow").empty())
        single = jvm_constant(df, "Iterator.single", lambda d: java_class(d, "scala.collection.Iterator").single)
        return single(create(expressions).apply(empty).copy())
    return None


def driver_batches(df: DataFrame) -> list[pa.RecordBatch] | None:
    """`df`'s rows as Spark's Arrow batches if the driver holds them already (see above), else None: the caller
    runs a job. Raises what Spark raises while optimizing `df`."""
    jdf = df._jdf
    rows = _driver_rows(df, jdf.queryExecution().optimizedPlan())
    if rows is None:
        return None
    conf = session_conf(df.sparkSession)
    converters = jvm_constant(df, "ArrowConverters", lambda d: getattr(
        java_class(d, "org.apache.spark.sql.execution.arrow.ArrowConverters$"), "MODULE$"))
    # Each element is one IPC stream (schema and a batch); duplicate names are allowed (`SELECT 1 AS a, 2 AS a`).
    streams = converters.toBatchWithSchemaIterator(rows, jdf.schema(), _MAX_ROWS_PER_BATCH, _MAX_BATCH_BYTES,
                                                   conf.sessionLocalTimeZone(), False, False)
    batches: list[pa.RecordBatch] = []
    while streams.hasNext():
        batches.extend(pa.ipc.open_stream(streams.next()).read_all().to_batches())
    return batches
