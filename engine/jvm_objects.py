"""JVM objects asked for once per py4j client, and lists of strings handed to the JVM in one round trip.

py4j costs a round trip per question: `jvm.a.b.C` asks the JVM about every dot, a static member is looked up on every
access, and a Python list given to a Java method crosses element by element (an `add` per string). On a busy driver
each round trip waits for a JVM thread behind Spark's tasks, so the statement path keeps what never changes and sends
lists whole.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

from py4j.java_gateway import JavaClass

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# JVM objects that never change for a py4j client (one per Spark driver): Scala objects, static members and constants.
_CONSTANTS: dict[tuple[int, str], tuple[Any, Any]] = {}
_CONSTANTS_LOCK = threading.Lock()
# Joins the strings of a list for the JVM to split: a control character no SQL text the gateway generates holds.
_SEPARATOR = "\x1f"
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)
_UNESCAPED = {"t": "\t", "n": "\n", "r": "\r"}
_FIELDS_SOURCE = (resources.files(__package__) / "Fields.java").read_text(encoding="utf-8")


def java_class(df: DataFrame, name: str) -> Any:
    """A JVM class by its full name in one step."""
    gateway = df.sparkSession.sparkContext._gateway
    assert gateway is not None  # typed optional; a running context always has its Py4J gateway
    return JavaClass(name, gateway._gateway_client)


def jvm_constant(df: DataFrame, name: str, lookup: Callable[[DataFrame], Any]) -> Any:
    """`lookup(df)`'s JVM object, asked once per py4j client under `name`."""
    return _once_per_client(df.sparkSession, name, lambda: lookup(df))


def compiled_java(spark: SparkSession, class_name: str, source: str) -> Any:
    """An instance of the public class `class_name` compiled from Java `source` in the driver, once per py4j client.

    Janino compiles it in memory, the compiler Spark itself uses for its generated code (so every Spark has it and
    no build step or jar is needed). Its class loader's parent is Fields.java's, whose is Spark's: the class may use
    Spark's and Scala's classes and the helpers' shared answer format. For work that would cost one py4j round trip
    per object, or Scala reflection, done in one call."""
    def compile_it() -> Any:
        loader = _compiled_loader(spark, _helpers_loader(spark), source)
        return loader.loadClass(class_name).newInstance()

    return _once_per_client(spark, "compiled:" + class_name, compile_it)


def _helpers_loader(spark: SparkSession) -> Any:
    """The class loader of Fields.java, compiled once per py4j client over Spark's."""
    return _once_per_client(spark, "loader:Fields", lambda: _compiled_loader(
        spark, spark._jsparkSession.getClass().getClassLoader(), _FIELDS_SOURCE))


def _compiled_loader(spark: SparkSession, parent: Any, source: str) -> Any:
    compiler = spark._jvm.org.codehaus.janino.SimpleCompiler()  # type: ignore[union-attr]  # a session's JVM
    compiler.setParentClassLoader(parent)
    compiler.cook(source)
    return compiler.getClassLoader()


def escaped_lines(text: str) -> list[list[str]]:
    """The fields of each line of a Java helper's answer: lines of tab-separated fields, with backslash, tab, CR and
    LF escaped in each field as `\\\\`, `\\t`, `\\r`, `\\n` (Fields.java, which the helpers write with)."""
    if not text:
        return []
    return [[_ESCAPED.sub(_unescape, part) for part in line.split("\t")] for line in text.split("\n")]


def _unescape(match: re.Match[str]) -> str:
    return _UNESCAPED.get(match[1], match[1])


def _once_per_client(spark: SparkSession, name: str, make: Callable[[], Any]) -> Any:
    gateway = spark.sparkContext._gateway
    assert gateway is not None  # typed optional; a running context always has its Py4J gateway
    client = gateway._gateway_client
    with _CONSTANTS_LOCK:
        kept = _CONSTANTS.get((id(client), name))
    if kept is None or kept[0] is not client:
        kept = (client, make())
        with _CONSTANTS_LOCK:
            _CONSTANTS[(id(client), name)] = kept
    return kept[1]


def java_strings(df: DataFrame, values: Sequence[str]) -> Any:
    """`values` as a Java `String[]` in one round trip (py4j would send a list string by string): joined here, split
    in the JVM by commons-lang3 (on Spark's class path), empty strings kept. For the gateway's own generated texts
    (column names, projections), which never hold the separator; an array of one or more strings. Java methods
    declared with varargs (`Dataset.toDF`, `Dataset.selectExpr`) take it as their arguments."""
    if not values or any(_SEPARATOR in value for value in values):
        raise ValueError("java_strings: an empty list, or a string holding the separator")
    split = jvm_constant(df, "StringUtils.splitByWholeSeparatorPreserveAllTokens", lambda d: java_class(
        d, "org.apache.commons.lang3.StringUtils").splitByWholeSeparatorPreserveAllTokens)
    return split(_SEPARATOR.join(values), _SEPARATOR)
