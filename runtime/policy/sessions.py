"""A Spark session as users get it: without the reflection functions, which call any static Java method in the
driver (`java_method('java.lang.System', 'exit', 0)` killed the JVM). Dropping them from the session's function
registry means no spelling reaches them; the plan checks refuse them as well."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REFLECTION_FUNCTIONS = ("java_method", "reflect", "try_reflect")


def harden(spark: SparkSession) -> SparkSession:
    registry = spark._jsparkSession.sessionState().functionRegistry()
    identifier = spark._jvm.org.apache.spark.sql.catalyst.FunctionIdentifier
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
    spark._jvm.org.apache.spark.sql.catalyst.CurrentUserContext.CURRENT_USER().set(user)
