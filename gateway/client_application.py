"""The name of the application behind a session (`client_application` of `system.query.history` and
`system.runtime.sessions`), from what the client sends when it opens the session.

What the clients send (seen on the wire; tests/test_client_application.py holds each):
- a name the client chose: the OpenSession configuration key `client_application`, bare (PyHive's
  `configuration={"client_application": "nightly-report"}`, the Databricks connector's `session_configuration`) or
  as a Hive setting (a JDBC URL's `?client_application=...` reaches the server as `set:hiveconf:client_application`);
  the sluicegate shell sends `sluicegate shell` so;
- the HTTP `User-Agent` header, kept whole (cut at 256 characters): the Databricks SQL connector sends
  `PyDatabricksSqlConnector/<version>`, with its `user_agent_entry` in parentheses (dbt-databricks puts its own name
  and version there); Thrift's Python HTTP client (PyHive over HTTP) `Python/THttpClient`;
- Hive's JDBC driver (beeline, and the tools built on it) names nothing, but every session it opens carries its
  fetch size as `set:hiveconf:hive.server2.thrift.resultset.default.fetch.size` with `use:database`, which no other
  client here sends: `Hive JDBC`;
- PyHive over the binary port sends nothing but its protocol version (V6) and the user name, and the Databricks
  connector over Thrift nothing beyond its User-Agent: without one of the above, a session is named by the protocol
  family it speaks, `hive` or `databricks`.

Pure: no Thrift types, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

NAME_KEYS = ("client_application", "set:hiveconf:client_application")
HIVE_JDBC = "Hive JDBC"
_HIVE_JDBC_FETCH_SIZE = "set:hiveconf:hive.server2.thrift.resultset.default.fetch.size"
MAX_CHARS = 256   # the history's column
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]+")


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    text = _UNPRINTABLE.sub(" ", value).strip()
    return text[:MAX_CHARS] or None


def client_application(configuration: Mapping[str, str], *, databricks: bool, user_agent: str | None = None) -> str:
    """The application's name: the one the client chose, else its User-Agent, else `Hive JDBC` for the Hive
    driver's sessions, else the protocol family (`databricks` when `databricks`, else `hive`)."""
    lowered = {key.lower(): value for key, value in configuration.items()}
    for key in NAME_KEYS:
        named = _clean(lowered.get(key))
        if named:
            return named
    agent = _clean(user_agent)
    if _HIVE_JDBC_FETCH_SIZE in lowered and "use:database" in lowered:
        return HIVE_JDBC
    if agent:
        return agent
    return "databricks" if databricks else "hive"
