"""Spark SQL types as HiveServer2 and JDBC see them: one table, read by the Thrift conversions (type ids) and by
the metadata operations (JDBC type codes for GetColumns and GetTypeInfo)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class HiveType:
    hive_name: str      # the name in TTypeId without `_TYPE`, and the TYPE_NAME JDBC shows
    jdbc_code: int      # java.sql.Types
    column_size: int | None
    numeric: bool = False


_TABLE: dict[str, HiveType] = {
    "boolean": HiveType("BOOLEAN", 16, None),
    "tinyint": HiveType("TINYINT", -6, 3, True),
    "smallint": HiveType("SMALLINT", 5, 5, True),
    "int": HiveType("INT", 4, 10, True),
    "bigint": HiveType("BIGINT", -5, 19, True),
    "float": HiveType("FLOAT", 6, 7, True),
    "double": HiveType("DOUBLE", 8, 15, True),
    "decimal": HiveType("DECIMAL", 3, 38, True),
    "string": HiveType("STRING", 12, 2147483647),
    "varchar": HiveType("VARCHAR", 12, None),
    "char": HiveType("CHAR", 1, None),
    "binary": HiveType("BINARY", -2, 2147483647),
    "date": HiveType("DATE", 91, 10),
    "timestamp": HiveType("TIMESTAMP", 93, 29),
    "timestamp_ntz": HiveType("TIMESTAMP", 93, 29),
    "array": HiveType("ARRAY", 2003, None),
    "map": HiveType("MAP", 2000, None),
    "struct": HiveType("STRUCT", 2002, None),
    "void": HiveType("NULL", 0, None),
    "interval year to month": HiveType("INTERVAL_YEAR_MONTH", 1111, None),
    "interval day to second": HiveType("INTERVAL_DAY_TIME", 1111, None),
    "variant": HiveType("STRING", 12, 2147483647),
}

_BASE = re.compile(r"^([a-z_]+)")
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
_LENGTH = re.compile(r"^(?:var)?char\((\d+)\)$")


def base_name(spark_type: str) -> str:
    spark_type = spark_type.strip().lower()
    if spark_type.startswith("interval"):
        if any(unit in spark_type for unit in ("year", "month")):
            return "interval year to month"
        return "interval day to second"
    found = _BASE.match(spark_type)
    return found.group(1) if found else spark_type


def hive_type(spark_type: str) -> HiveType:
    """The Hive view of a Spark SQL type string; unknown types are shown as STRING (their values are text)."""
    return _TABLE.get(base_name(spark_type), _TABLE["string"])


def decimal_precision_scale(spark_type: str) -> tuple[int, int] | None:
    found = _DECIMAL.match(spark_type.strip().lower())
    if found:
        return int(found.group(1)), int(found.group(2))
    return (10, 0) if spark_type.strip().lower() == "decimal" else None


def char_length(spark_type: str) -> int | None:
    found = _LENGTH.match(spark_type.strip().lower())
    return int(found.group(1)) if found else None


def jdbc_type_name(spark_type: str) -> str:
    """TYPE_NAME for GetColumns: Hive spells the full type (`decimal(10,2)`, `array<int>`) in upper-case base."""
    hive = hive_type(spark_type)
    if hive.hive_name in ("DECIMAL", "VARCHAR", "CHAR", "ARRAY", "MAP", "STRUCT"):
        return spark_type.upper()
    return hive.hive_name


def all_types() -> list[tuple[str, HiveType]]:
    """One entry per distinct Hive type, for GetTypeInfo."""
    seen: dict[str, tuple[str, HiveType]] = {}
    for name, hive in _TABLE.items():
        seen.setdefault(hive.hive_name, (name, hive))
    return list(seen.values())
