"""Session variables in statements: `${hivevar:name}` and `${name}`, replaced by the gateway from the session's own
variables (`SET hivevar:name=...`, a JDBC URL's `#name=value` or the shell's `--var name=value`, both sent in
OpenSession).

Spark's own substitution is off (`spark.sql.variable.substitute`): it also answers `${env:...}`, `${system:...}` and
any setting, which would read the server's environment into a user's query. Names here are plain identifiers, so
they can never name a Spark or Hadoop setting (those are dotted). A reference to a variable the session does not
have is refused (`require_bound`) rather than run as written: `read_files('${input}/orders')` would otherwise read a
folder literally named `${input}`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sluicegate.storage.spark_errors import RuntimeQueryError

_VARIABLE = re.compile(r"\$\{(?:hivevar:)?([A-Za-z_][A-Za-z0-9_]*)\}")


def substitute(sql: str, lookup: Callable[[str], str | None]) -> str:
    if "${" not in sql:
        return sql

    def value(found: re.Match[str]) -> str:
        known = lookup(found.group(1))
        return found.group(0) if known is None else known

    return _VARIABLE.sub(value, sql)


class UnresolvedVariableError(RuntimeQueryError):
    error_class = "UNRESOLVED_VARIABLE"
    sqlstate = "42883"


def require_bound(sql: str) -> None:
    """Refuse a statement that still names a session variable after substitution, at the reference."""
    found = _VARIABLE.search(sql)
    if found is None:
        return
    before = sql[: found.start()]
    name = found.group(1)
    raise UnresolvedVariableError(
        f"the session has no variable `{name}` for {found.group(0)}", line=before.count("\n") + 1,
        column=found.start() - (before.rfind("\n") + 1) + 1,
        hint=f"set it first (SET hivevar:{name}=...), start the shell with --var {name}=..., or end the JDBC URL with "
             f"#{name}=...")
