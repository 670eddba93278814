"""SQLAlchemy's `sluicegate://` dialect: PyHive's `hive://` with the reflection that reads Spark's answers.

PyHive 0.7.0 was written for Hive: it takes column 0 of `SHOW TABLES` as the table name (Spark, and so this gateway,
put the namespace there: dropbox/PyHive#150), lists views as tables, and knows a missing table only by Hive's
"SemanticException ... Table not found" text. Everything else (types, the DB-API, SQL compilation) is PyHive's.
"""

from __future__ import annotations

from typing import Any

from pyhive.sqlalchemy_hive import HiveDialect
from sqlalchemy import exc, text

TABLE_NOT_FOUND = ("42P01", "TABLE_OR_VIEW_NOT_FOUND")


class SluicegateDialect(HiveDialect):
    name = "sluicegate"
    supports_statement_cache = True  # no compiler state of its own: SQLAlchemy may cache compiled statements

    @classmethod
    def import_dbapi(cls) -> Any:
        """SQLAlchemy 2's name for PyHive's `dbapi()` (which it would call with a deprecation warning)."""
        from pyhive import hive

        return hive

    def _in_schema(self, statement: str, schema: str | None) -> str:
        return f"{statement} IN {self.identifier_preparer.quote_identifier(schema)}" if schema else statement

    def get_view_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        rows = connection.execute(text(self._in_schema("SHOW VIEWS", schema))).fetchall()
        return [row[1] for row in rows if not row[2]]  # (namespace, viewName, isTemporary)

    def get_table_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        views = set(self.get_view_names(connection, schema))
        rows = connection.execute(text(self._in_schema("SHOW TABLES", schema))).fetchall()
        return [row[1] for row in rows if not row[2] and row[1] not in views]  # (namespace, tableName, isTemporary)

    def _get_table_columns(self, connection: Any, table_name: str, schema: str | None) -> Any:
        try:
            return super()._get_table_columns(connection, table_name, schema)
        except exc.OperationalError as error:
            if any(marker in str(error) for marker in TABLE_NOT_FOUND):
                raise exc.NoSuchTableError(f"{schema}.{table_name}" if schema else table_name) from error
            raise
