"""A Spark session as users get it: without the reflection functions, which call any static Java method in the
driver (`java_method('java.lang.System', 'exit', 0)` killed the JVM). Dropping them from the session's function
registry means no spelling reaches them; the plan checks refuse them as well."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from py4j.java_gateway import JavaClass

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REFLECTION_FUNCTIONS = ("java_method", "reflect", "try_reflect")
# The JVM's `CurrentUserContext.CURRENT_USER` thread-local, per py4j gateway client (one per Spark driver).
_CURRENT_USER: dict[int, tuple[Any, Any]] = {}


def harden(spark: SparkSession) -> SparkSession:
    registry = spark._jsparkSession.sessionState().functionRegistry()
    jvm = spark._jvm
    assert jvm is not None  # typed optional; a session always has its JVM
    identifier = jvm.org.apache.spark.sql.catalyst.FunctionIdentifier
    for name in REFLECTION_FUNCTIONS:
        registry.dropFunction(identifier.apply(name))
    return spark


def new_user_session(spark: SparkSession) -> SparkSession:
    """A fresh Spark session (own temp views, current database and settings) on the shared context, hardened."""
    return harden(spark.newSession())


def set_current_user(spark: SparkSession, user: str) -> None:
    """`current_user()` and `session_user()` answer the session's user, not the server's OS account (a view that
    filters rows by user must see who asks). Spark reads it from a thread-local of the JVM thread that plans the
    statement: the operation's own thread, which runs the whole statement."""
    gateway = spark.sparkContext._gateway
    assert gateway is not None  # typed optional; a running context always has its Py4J gateway
    client = gateway._gateway_client
    cached = _CURRENT_USER.get(id(client))
    if cached is None or cached[0] is not client:  # once per driver: py4j's `jvm.a.b.C` asks about every dot
        cached = (client, JavaClass("org.apache.spark.sql.catalyst.CurrentUserContext", client).CURRENT_USER())
        _CURRENT_USER[id(client)] = cached
    cached[1].set(user)
