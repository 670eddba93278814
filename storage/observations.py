"""Spark's Observation without its leak: observed actions run in a throwaway clone of the session.

An Observation (`df.observe(Observation(...), ...)`) learns its metrics from a query-execution listener that the
first Observation of a session registers on it (the session's ObservationManager). Registering puts the session's
ExecutionListenerBus on the SparkContext's listener bus, and nothing ever takes it off: the bus holds the listener,
the listener holds the session. A streaming query runs each start in a clone of its session, so every start of a
stream with expectations left one more listener, holding that start's session (its caches, its plans), on the path
of every event the driver dispatches; a client's connection on a cluster did the same once per session.

Counting without an Observation costs a second pass over the batch (a cache and an aggregation) or a Python step in
every write, and the write's own SQL metrics live on a QueryExecution that DataFrameWriter keeps to itself;
unregistering the listener from the session the observed action really ran in would cut that session's next
Observation off (its ObservationManager registers once), and Spark's ContextCleaner drops a bus only once its
session is collected, which the listener prevents. So the action runs elsewhere: `observable` gives the DataFrame in
a fresh clone of its session (a copy of its conf, functions, temp views and current database, made in a few ms
without touching data; Spark's own streaming starts each query in one), the Observations inside the block count
during the action as before, and on leaving the block the clone's own bus (it reports that clone's executions only,
so it cannot be anyone else's) is taken off the context's listener bus. Blocks nest: an action observed inside
another block reuses its clone.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from py4j.java_gateway import JavaClass
from py4j.protocol import Py4JError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)

_LOCK = threading.Lock()
_IN_USE: set[str] = set()   # sessionUUIDs of the clones inside an `observable` block


@contextmanager
def observable(df: DataFrame) -> Iterator[DataFrame]:
    """`df` bound to a throwaway clone of its session, for actions whose Observations are read inside the block
    (read `Observation.get` before leaving it: the clone stops hearing of its executions on exit)."""
    from pyspark.sql import DataFrame as Frame
    from pyspark.sql import SparkSession

    session = df.sparkSession
    with _LOCK:
        nested = session._jsparkSession.sessionUUID() in _IN_USE
    if nested:
        yield df
        return
    jclone = session._jsparkSession.cloneSession()
    key = jclone.sessionUUID()
    with _LOCK:
        _IN_USE.add(key)
    clone = SparkSession(session.sparkContext, jclone)
    try:
        gateway = session.sparkContext._gateway
        assert gateway is not None  # typed optional; a running context always has its Py4J gateway
        # one lookup of the class (py4j's `jvm.a.b.C` asks the JVM about every dot)
        dataset = JavaClass("org.apache.spark.sql.classic.Dataset", gateway._gateway_client)
        yield Frame(dataset.ofRows(jclone, df._jdf.logicalPlan()), clone)
    finally:
        with _LOCK:
            _IN_USE.discard(key)
        release_query_listeners(clone)


def release_query_listeners(session: SparkSession) -> None:
    """Take `session`'s ExecutionListenerBus off the SparkContext's listener bus: for a session that runs nothing
    more. Spark keeps the bus in a private field of the session's ExecutionListenerManager (`listenerBus`, an
    Option since Spark 4.0); if that ever changes, the listeners are cleared instead (public API), which frees the
    session and leaves Spark's ContextCleaner to drop the empty bus once the session is garbage-collected."""
    manager = session._jsparkSession.listenerManager()
    try:
        field = manager.getClass().getDeclaredField("listenerBus")
        field.setAccessible(True)
        bus: Any = field.get(manager)
        if bus.isDefined():
            session.sparkContext._jsc.sc().removeSparkListener(bus.get())
    except Py4JError as exc:
        log.warning("could not take a throwaway session's query listeners off Spark's listener bus (%s); "
                    "clearing them, the bus goes at the next garbage collection", str(exc).splitlines()[0])
        manager.clear()
