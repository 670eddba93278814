"""`DESCRIBE TABLE [EXTENDED] t AS JSON` for the warehouse's tables: one row, one column `json_metadata`, in the
document Spark 4 and Databricks write (what dbt-databricks reads for a relation's columns: `columns[].name`,
`columns[].type` as a type tree, `columns[].comment`).

Spark answers the same statement itself for its own tables and temporary views; the warehouse's Delta tables are
described from the catalog here, as their DESCRIBE rows are (executor/listings/describe.py).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sluicegate.catalog.store import TableEntry
from sluicegate.dialect import catalogs
from sluicegate.dialect.constraints import FOREIGN_KEY
from sluicegate.engine.sql import StatementResult
from sluicegate.executor.output import rows_result
from sluicegate.storage.constraints import declared_string_type

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType


def type_json(data_type: DataType) -> dict[str, Any]:
    """A Spark type as the JSON type tree of DESCRIBE ... AS JSON: `{"name": ...}` plus what the type carries
    (decimal precision and scale, element, key and value types, struct fields; TIMESTAMP is `timestamp_ltz`)."""
    from pyspark.sql.types import ArrayType, DecimalType, MapType, StructType, TimestampType

    if isinstance(data_type, DecimalType):
        return {"name": "decimal", "precision": data_type.precision, "scale": data_type.scale}
    if isinstance(data_type, ArrayType):
        return {"name": "array", "element_type": type_json(data_type.elementType),
                "element_nullable": data_type.containsNull}
    if isinstance(data_type, MapType):
        return {"name": "map", "key_type": type_json(data_type.keyType),
                "value_type": type_json(data_type.valueType), "value_nullable": data_type.valueContainsNull}
    if isinstance(data_type, StructType):
        return {"name": "struct", "fields": [_field_json(field) for field in data_type.fields]}
    if isinstance(data_type, TimestampType):
        return {"name": "timestamp_ltz"}
    return {"name": data_type.simpleString()}


def _field_json(field: Any) -> dict[str, Any]:
    declared = declared_string_type(field.metadata)
    described = {"name": field.name, "nullable": field.nullable,
                 "type": {"name": declared[0], "length": declared[1]} if declared else type_json(field.dataType)}
    comment = (field.metadata or {}).get("comment")
    if comment is not None:
        described["comment"] = comment
    return described


def describe_document(entry: TableEntry, schema: StructType, table_type: str, extended: bool) -> dict[str, Any]:
    """The JSON document of one catalog table; `extended` adds what DESCRIBE EXTENDED adds (owner, comment,
    properties, location, the defining query)."""
    document: dict[str, Any] = {
        "table_name": entry.name,
        "catalog_name": catalogs.current().name,
        "namespace": [entry.database],
        "schema_name": entry.database,
        "columns": [_field_json(field) for field in schema.fields],
    }
    if entry.partition_by:
        document["partition_columns"] = list(entry.partition_by)
    if extended:
        document.update({"owner": entry.owner, "type": table_type, "created_by": "sluicegate"})
        if entry.kind != "VIEW":
            document["provider"] = "delta"
        if entry.comment is not None:
            document["comment"] = entry.comment
        if entry.properties:
            document["table_properties"] = dict(sorted(entry.properties.items()))
        if entry.kind in ("VIEW", "MATERIALIZED_VIEW") and entry.definition:
            document["view_text"] = entry.definition
        if entry.location and entry.kind != "VIEW":
            document["location"] = f"file:{entry.location}"
        if entry.created_at is not None:
            document["created_time"] = entry.created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        if entry.keys:
            document["table_constraints"] = table_constraints(entry)
    return document


def _quoted(names: Any) -> str:
    return ", ".join("`" + name.replace("`", "``") + "`" for name in names)


def key_clauses(entry: TableEntry) -> list[tuple[str, str]]:
    """The table's informational keys, each as (name, `PRIMARY KEY (`id`)` | `FOREIGN KEY (`x`) REFERENCES
    `main`.`s`.`t` (`a`)`): the referenced table named in full, as Databricks resolves it; a foreign key written
    without its referenced columns lists none (Databricks names the referenced primary key's)."""
    clauses = []
    for ordinal, key in enumerate(entry.keys, start=1):
        named = key.named(entry.name, ordinal)
        body = f"{key.kind} ({_quoted(key.columns)})"
        if key.kind == FOREIGN_KEY:
            parts = list(key.references)
            if len(parts) < 3:
                parts = [catalogs.current().name, *([entry.database] if len(parts) < 2 else []), *parts]
            body += f" REFERENCES {'.'.join(_quoted([part]) for part in parts)}"
            if key.referenced_columns:
                body += f" ({_quoted(key.referenced_columns)})"
        clauses.append((named.name or "", body))
    return clauses


def table_constraints(entry: TableEntry) -> str:
    """The table's keys as Databricks writes them in `table_constraints`, `[(pk,PRIMARY KEY (`id`)), (fk,...)]`:
    dbt-databricks parses it, with use_describe_as_json_for_relation_metadata, for the keys a model has (and drops
    those it no longer declares)."""
    return "[" + ", ".join(f"({name},{body})" for name, body in key_clauses(entry)) + "]"


def json_result(document: dict[str, Any]) -> StatementResult:
    return rows_result([("json_metadata", "string")], [(json.dumps(document),)])
