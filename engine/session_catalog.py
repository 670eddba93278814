"""Spark's session catalog read in place: the names of Spark's databases, of a database's tables and of a session's
temporary views, a table's kind, comment and schema, and the functions a session has.

This is what the metadata RPCs (GetSchemas, GetTables, GetColumns, GetFunctions) and `information_schema` need of
what only Spark's session knows (its non-Delta tables, its temporary views, its built-in functions). Spark's own
`spark.catalog.listDatabases()`, `listTables()`, `listColumns()` and `listFunctions()` build a Dataset and PySpark
collects it with Spark jobs, which queue for task slots behind every other client's queries: 467 ms at 8 clients and
3.2 s at 64 in the load test of 2026-11-27, for a listing the driver holds in memory. Here each answer is a few py4j
calls on the catalog objects themselves (the shared external catalog, the session's `SessionCatalog`), never a plan,
a Dataset or a job.

A listing's questions are answered in one py4j call by CatalogListing.java, compiled in the driver (Spark's databases,
the session's temporary views, every table with its kind and comment): under load each round trip waits for a JVM
thread behind Spark's tasks, and a GetTables made about nine. Elsewhere a Scala
sequence of strings crosses in three calls (the sequence, its length, its elements joined by NUL) instead of one per
element; should a name hold a NUL (only a backquoted Spark name can), the lengths disagree and the elements are read
one by one. The built-in functions never change in a process: they are read once, with their usage text, and kept.
"""

from __future__ import annotations

import json
import re
import threading
import weakref
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from py4j.java_gateway import JavaClass
from py4j.protocol import Py4JJavaError

from sluicegate.engine.jvm_objects import compiled_java, escaped_lines
from sluicegate.engine.sessions import REFLECTION_FUNCTIONS

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class SparkTable:
    """A table or view of Spark's external catalog, as the listings show it."""

    kind: str                 # Spark's CatalogTableType: MANAGED, EXTERNAL or VIEW
    comment: str | None


@dataclass(frozen=True)
class SparkListing:
    """Spark's databases, a session's temporary views and every table of Spark's catalog, read together."""

    databases: tuple[str, ...]
    temporary_views: tuple[str, ...]
    tables: dict[str, dict[str, SparkTable]]   # database -> name -> table


@dataclass(frozen=True)
class SparkFunction:
    name: str
    usage: str | None         # what Spark's catalog calls the function's description


@dataclass(frozen=True)
class _Catalogs:
    session: Any              # the session's SessionCatalog: its temporary views, its function registry
    external: Any             # the external catalog its sessions share: Spark's databases, tables and views


_SEPARATOR = "\x00"
_LISTING = "sluicegate.engine.CatalogListing"
_LISTING_SOURCE = (resources.files(__package__) / "CatalogListing.java").read_text(encoding="utf-8")
_NO_COMMENT = "\x00"   # CatalogListing's comment of a table that has none
_CHAR_VARCHAR = re.compile(r"(?:var)?char\(\d+\)")
_lock = threading.Lock()
# per SparkSession (each client session has its own): its catalogs' JVM objects, fetched once
_catalogs: weakref.WeakKeyDictionary[SparkSession, _Catalogs] = weakref.WeakKeyDictionary()
# per py4j gateway client (one per driver JVM): (client, the functions a user session has), read once
_functions: dict[int, tuple[Any, tuple[SparkFunction, ...]]] = {}
_functions_lock = threading.Lock()


def _client(spark: SparkSession) -> Any:
    gateway = spark.sparkContext._gateway
    assert gateway is not None  # typed optional; a running context always has its Py4J gateway
    return gateway._gateway_client


def _strings(seq: Any) -> list[str]:
    """A Scala `Seq` as Python strings (each element's `toString`), in three py4j calls."""
    size = int(seq.length())
    if size == 0:
        return []
    parts = str(seq.mkString(_SEPARATOR)).split(_SEPARATOR)
    if len(parts) == size:
        return parts
    return [str(seq.apply(i)) for i in range(size)]




def _catalogs_of(spark: SparkSession) -> _Catalogs:
    with _lock:
        found = _catalogs.get(spark)
    if found is None:
        session = spark._jsparkSession.sessionState().catalog()
        found = _Catalogs(session, session.externalCatalog())
        with _lock:
            _catalogs[spark] = found
    return found


def _external(spark: SparkSession) -> Any:
    return _catalogs_of(spark).external


def _session_catalog(spark: SparkSession) -> Any:
    return _catalogs_of(spark).session




def _listing_helper(spark: SparkSession) -> Any:
    return compiled_java(spark, _LISTING, _LISTING_SOURCE)


def listing(spark: SparkSession) -> SparkListing:
    """Spark's databases, the session's temporary views (not the global ones) and the tables of every database,
    in one py4j call (a database or table dropped meanwhile is left out)."""
    lines = escaped_lines(str(_listing_helper(spark).listing(_session_catalog(spark))))
    counts = lines[0]
    databases, views = int(counts[0]), int(counts[1])
    names = [line[0] for line in lines[1:1 + databases + views]]
    tables: dict[str, dict[str, SparkTable]] = {}
    for database, name, kind, comment in lines[1 + databases + views:]:
        tables.setdefault(database, {})[name] = SparkTable(kind, None if comment == _NO_COMMENT else comment)
    return SparkListing(tuple(names[:databases]), tuple(names[databases:]), tables)


def _table(spark: SparkSession, database: str, name: str) -> Any | None:
    external = _external(spark)
    try:
        return external.getTable(database, name)
    except Py4JJavaError:
        if external.tableExists(database, name):
            raise
        return None




def _as_listed(schema_json: str) -> str:
    """A catalog schema as Spark's catalog API lists its columns: CHAR(n) and VARCHAR(n), nested ones too, are
    STRING there (`spark.catalog.listColumns` reads the table through its V2 columns, which replace them)."""

    def plain(node: Any) -> Any:
        if isinstance(node, str):
            return "string" if _CHAR_VARCHAR.fullmatch(node) else node
        if isinstance(node, list):
            return [plain(item) for item in node]
        if isinstance(node, dict):
            return {key: value if key in ("name", "metadata") else plain(value) for key, value in node.items()}
        return node

    return json.dumps(plain(json.loads(schema_json)))


def table_schema(spark: SparkSession, database: str, name: str) -> str | None:
    """The schema of Spark's table or view `database.name` as Spark's JSON, its columns typed as Spark's catalog
    API lists them; None if it is not there."""
    found = _table(spark, database, name)
    return None if found is None else _as_listed(str(found.schema().json()))




def temporary_view_schema(spark: SparkSession, name: str) -> str | None:
    """The schema of the session's temporary view `name` as Spark's JSON; None if it has none by that name."""
    found = _session_catalog(spark).getRawTempView(name)
    if not found.isDefined():
        return None
    return _as_listed(str(found.get().tableMeta().schema().json()))


def functions(spark: SparkSession) -> tuple[SparkFunction, ...]:
    """The functions a user session has, sorted by name as Spark's `SHOW FUNCTIONS` sorts them: Spark's built-ins
    and operators without the reflection functions (engine/sessions.py drops them from every user session), with
    their usage text. Users add none to Spark (a SQL function lives in the gateway's catalog, and a statement that
    calls one has it only while it runs), so this is the same for every session and is read once per driver (about
    500 functions, three py4j calls each)."""
    client = _client(spark)
    with _functions_lock:
        cached = _functions.get(id(client))
        if cached is not None and cached[0] is client:
            return cached[1]
        found = _read_functions(spark)
        _functions[id(client)] = (client, found)
        return found


def _read_functions(spark: SparkSession) -> tuple[SparkFunction, ...]:
    catalog = _session_catalog(spark)
    client = _client(spark)
    names = []
    # (name,SYSTEM) or (name,USER): SHOW FUNCTIONS' own source; the system ones are Spark's
    for pair in _strings(catalog.listFunctions("default", "*")):
        name, _, scope = pair[1:-1].rpartition(",")
        if scope == "SYSTEM":
            names.append(name)
    registry = JavaClass("org.apache.spark.sql.catalyst.analysis.FunctionRegistry", client)
    names.extend(_strings(registry.builtinOperators().keys().toSeq()))  # `<>`, `!=`, `between`, `case`, `||`
    identifier = JavaClass("org.apache.spark.sql.catalyst.FunctionIdentifier", client)
    found = []
    for name in sorted(names):
        if name in REFLECTION_FUNCTIONS:
            continue
        try:
            usage = catalog.lookupFunctionInfo(identifier.apply(name)).getUsage()
        except Py4JJavaError:
            usage = None
        found.append(SparkFunction(name, None if usage is None else str(usage)))
    return tuple(found)
