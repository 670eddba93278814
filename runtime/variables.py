"""Session variables in statements: `${hivevar:name}` and `${name}`, replaced by the gateway from the session's own
variables (`SET hivevar:name=...`, or a JDBC URL's `?hive.var=...` sent in OpenSession).

Spark's own substitution is off (`spark.sql.variable.substitute`): it also answers `${env:...}`, `${system:...}` and
any setting, which would read the server's environment into a user's query. Names here are plain identifiers, so
they can never name a Spark or Hadoop setting (those are dotted); an unknown variable is left as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_VARIABLE = re.compile(r"\$\{(?:hivevar:)?([A-Za-z_][A-Za-z0-9_]*)\}")


def substitute(sql: str, lookup: Callable[[str], str | None]) -> str:
    if "${" not in sql:
        return sql

    def value(found: re.Match[str]) -> str:
        known = lookup(found.group(1))
        return found.group(0) if known is None else known

    return _VARIABLE.sub(value, sql)
