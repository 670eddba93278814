"""A Spark session as users get it: without the reflection functions, which call any static Java method in the
driver (`java_method('java.lang.System', 'exit', 0)` killed the JVM). Dropping them from the session's function
registry means no spelling reaches them; the plan checks refuse them as well."""

from __future__ import annotations

import json
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


# Jackson's ObjectMapper in the JVM, per py4j gateway client: it writes a session's settings as JSON in one call.
_JSON_WRITER: dict[int, tuple[Any, Any]] = {}


def session_settings(spark: SparkSession) -> dict[str, str]:
    """Every setting the session (or the context under it) was given, whatever its value: what can make the same query
    answer differently in two sessions (the result cache keys by it). Two py4j calls: the settings as one Java map,
    written as JSON by the JVM (reading the map entry by entry would be a call per setting)."""
    gateway = spark.sparkContext._gateway
    assert gateway is not None  # typed optional; a running context always has its Py4J gateway
    client = gateway._gateway_client
    cached = _JSON_WRITER.get(id(client))
    if cached is None or cached[0] is not client:
        mapper = JavaClass("com.fasterxml.jackson.databind.ObjectMapper", client)()
        cached = (client, mapper)
        _JSON_WRITER[id(client)] = cached
    settings = spark.conf._jconf.getAllAsJava()
    return dict(json.loads(cached[1].writeValueAsString(settings)))
