"""Spark's store assignment (ANSI policy) for INSERT: which source types may be written into a column, and the
projection that casts them, so a value that does not fit fails naming its column instead of landing as garbage."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sluicegate.executor.errors import ColumnCountMismatchError, IncompatibleDataError, UnresolvedColumnError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructType

_NUMERIC = ("ByteType", "ShortType", "IntegerType", "LongType", "FloatType", "DoubleType", "DecimalType")
_DATETIME = ("DateType", "TimestampType", "TimestampNTZType")


def _kind(data_type: DataType) -> str:
    return type(data_type).__name__


def can_store(source: DataType, target: DataType) -> bool:
    """ANSI store assignment: numbers into numbers, anything into strings, dates and timestamps into each other;
    never text into numbers, dates or booleans (Spark rejects those at analysis)."""
    src, dst = _kind(source), _kind(target)
    if src == "NullType" or source == target:
        return True
    if dst in ("StringType", "VarcharType", "CharType"):
        return src not in ("BinaryType",) and not src.endswith(("ArrayType", "MapType", "StructType"))
    if dst in _NUMERIC:
        return src in _NUMERIC
    if dst in _DATETIME:
        return src in _DATETIME
    if dst == "BooleanType":
        return src == "BooleanType"
    return src == dst and source.simpleString() == target.simpleString()


def can_cast_literal(source: DataType, target: DataType) -> bool:
    """Databricks' implicit cast of a quoted literal in INSERT: text into numbers, dates, timestamps and booleans,
    checked when it runs (ANSI: a value that is no such thing fails with CAST_INVALID_INPUT, never NULL)."""
    return _kind(source) == "StringType" and (_kind(target) in (*_NUMERIC, *_DATETIME, "BooleanType"))


def store_assign(df: DataFrame, target: StructType, table: str, columns: tuple[str, ...] = (),
                 string_literals: frozenset[int] = frozenset()) -> DataFrame:
    """`df`'s columns, by position (or into the named `columns`), cast to the table's schema; columns not named get
    NULL. Raises the errors Spark raises for a column count or a type that does not fit; the positions in
    `string_literals` (quoted literals only) may also be text cast to the column's type (`can_cast_literal`)."""
    from pyspark.sql import functions as F

    names = [f.name for f in target.fields]
    by_lower = {n.lower(): n for n in names}
    targets = list(columns) or names
    for wanted in targets:
        if wanted.lower() not in by_lower:
            raise UnresolvedColumnError(
                f"A column with name `{wanted}` cannot be resolved in table {table}; columns: {', '.join(names)}",
                hint="name columns of the table in INSERT INTO t (...)",
            )
    if len(df.columns) != len(targets):
        raise ColumnCountMismatchError(
            f"Cannot write to {table}: the query produces {len(df.columns)} columns but the table expects "
            f"{len(targets)} ({', '.join(targets)})",
            hint="select exactly one value per target column, or list the target columns",
        )
    # By position: the query's own names may repeat (Spark names `CAST(id AS INT)` after `id`), so each column is
    # renamed to its position before it is picked.
    positional = [f"_sg_col_{index}" for index in range(len(df.columns))]
    sources = dict(zip((by_lower[t.lower()] for t in targets),
                       zip(range(len(positional)), positional, df.schema.fields, strict=True), strict=False))
    df = df.toDF(*positional)
    projected = []
    for field in target.fields:
        if field.name not in sources:
            projected.append(F.lit(None).cast(field.dataType).alias(field.name))
            continue
        index, position, source = sources[field.name]
        literal = index in string_literals and can_cast_literal(source.dataType, field.dataType)
        if not literal and not can_store(source.dataType, field.dataType):
            raise IncompatibleDataError(
                f"Cannot write incompatible data for the table {table}: Cannot safely cast `{field.name}` "
                f'"{source.dataType.simpleString().upper()}" to "{field.dataType.simpleString().upper()}".',
                hint=f"CAST the value to {field.dataType.simpleString()} explicitly",
            )
        projected.append(F.col(position).cast(field.dataType).alias(field.name))
    return df.select(*projected)
