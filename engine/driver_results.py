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

import threading
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from py4j.java_gateway import JavaClass

from sluicegate.engine.sessions import session_conf

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_MAX_ROWS_PER_BATCH = 10_000
_MAX_BATCH_BYTES = 64 * 1024 * 1024


def _java_class(df: DataFrame, name: str) -> Any:
    """A JVM class by its full name in one step (py4j's `jvm.a.b.C` asks the JVM about every dot)."""
    gateway = df.sparkSession.sparkContext._gateway
    assert gateway is not None  # typed optional; a running context always has its Py4J gateway
    return JavaClass(name, gateway._gateway_client)


# JVM objects that never change for a py4j client (one per Spark driver): Scala objects and a constant, each a round
# trip to look up, kept per client as `sessions.py` keeps its own.
_CONSTANTS: dict[tuple[int, str], tuple[Any, Any]] = {}
_CONSTANTS_LOCK = threading.Lock()


def _constant(df: DataFrame, name: str, lookup: Any) -> Any:
    """`lookup(df)`'s JVM object, asked once per py4j client under `name`."""
    gateway = df.sparkSession.sparkContext._gateway
    assert gateway is not None  # typed optional; a running context always has its Py4J gateway
    client = gateway._gateway_client
    with _CONSTANTS_LOCK:
        kept = _CONSTANTS.get((id(client), name))
    if kept is None or kept[0] is not client:
        kept = (client, lookup(df))
        with _CONSTANTS_LOCK:
            _CONSTANTS[(id(client), name)] = kept
    return kept[1]


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
        # py4j asks the JVM what a static member is on every attribute access: the members are kept, as the row is
        create = _constant(df, "createProjection", lambda d: _java_class(
            d, "org.apache.spark.sql.catalyst.expressions.InterpretedUnsafeProjection").createProjection)
        empty = _constant(df, "InternalRow.empty",
                          lambda d: _java_class(d, "org.apache.spark.sql.catalyst.InternalRow").empty())
        single = _constant(df, "Iterator.single", lambda d: _java_class(d, "scala.collection.Iterator").single)
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
    converters = _constant(df, "ArrowConverters", lambda d: getattr(
        _java_class(d, "org.apache.spark.sql.execution.arrow.ArrowConverters$"), "MODULE$"))
    # Each element is one IPC stream (schema and a batch); duplicate names are allowed (`SELECT 1 AS a, 2 AS a`).
    streams = converters.toBatchWithSchemaIterator(rows, jdf.schema(), _MAX_ROWS_PER_BATCH, _MAX_BATCH_BYTES,
                                                   conf.sessionLocalTimeZone(), False, False)
    batches: list[pa.RecordBatch] = []
    while streams.hasNext():
        batches.extend(pa.ipc.open_stream(streams.next()).read_all().to_batches())
    return batches
