"""All conversions between HiveServer2 Thrift types and the gateway's domain types, in one place.

Results go out as HiveServer2 columns, or, to a client that reads them (Databricks' `canReadArrowResult`), as Arrow
IPC record batches, one `TSparkArrowBatch` per produced batch, LZ4-framed when the client can decompress them.

Errors become TStatus here and nowhere else: the message a client shows is `[ERROR_CLASS] message`, then the line
and column with the statement line and a caret under the offending place, then a hint where there is one.
"""

from __future__ import annotations

import logging

import numpy as np
import pyarrow as pa
from lz4 import frame as lz4_frame

from sluicegate.dialect.errors import SqlError
from sluicegate.engine.progress import Progress
from sluicegate.engine.results import ResultColumn, WireTypes, conform
from sluicegate.gateway import types as hive_types
from sluicegate.gateway.errors import InvalidRequestError
from sluicegate.gateway.handles import OperationHandle, SessionHandle
from sluicegate.gateway.operation.base import (
    ArrowBlock,
    FetchOrientation,
    Operation,
    OperationType,
    ResultFormat,
    RowBlock,
)
from sluicegate.gateway.operation.state import OperationState
from sluicegate.gateway.service import InfoType
from sluicegate.gateway.thrift import protocol as versions
from sluicegate.gateway.thrift.generated import ttypes as T
from sluicegate.storage.spark_errors import short_message

log = logging.getLogger(__name__)

# -- handles --------------------------------------------------------------------------------------------------


def to_tsession_handle(handle: SessionHandle) -> T.TSessionHandle:
    return T.TSessionHandle(sessionId=T.THandleIdentifier(guid=handle.guid, secret=handle.secret))


def to_session_handle(handle: T.TSessionHandle | None) -> SessionHandle:
    if handle is None or handle.sessionId is None:
        raise InvalidRequestError("the request carries no session handle")
    return SessionHandle(bytes(handle.sessionId.guid), bytes(handle.sessionId.secret))


_OPERATION_TYPES = {
    OperationType.EXECUTE_STATEMENT: T.TOperationType.EXECUTE_STATEMENT,
    OperationType.GET_TYPE_INFO: T.TOperationType.GET_TYPE_INFO,
    OperationType.GET_CATALOGS: T.TOperationType.GET_CATALOGS,
    OperationType.GET_SCHEMAS: T.TOperationType.GET_SCHEMAS,
    OperationType.GET_TABLES: T.TOperationType.GET_TABLES,
    OperationType.GET_TABLE_TYPES: T.TOperationType.GET_TABLE_TYPES,
    OperationType.GET_COLUMNS: T.TOperationType.GET_COLUMNS,
    OperationType.GET_FUNCTIONS: T.TOperationType.GET_FUNCTIONS,
    OperationType.UNKNOWN: T.TOperationType.UNKNOWN,
}


def to_toperation_handle(operation: Operation) -> T.TOperationHandle:
    status = operation.status()
    # Until it finishes we cannot know; clients fetch only after FINISHED, and then GetResultSetMetadata decides.
    has_result_set = status.has_result_set or status.state in (OperationState.PENDING, OperationState.RUNNING)
    return T.TOperationHandle(
        operationId=T.THandleIdentifier(guid=operation.handle.guid, secret=operation.handle.secret),
        operationType=_OPERATION_TYPES[operation.op_type],
        hasResultSet=has_result_set,
    )


def to_operation_handle(handle: T.TOperationHandle | None) -> OperationHandle:
    if handle is None or handle.operationId is None:
        raise InvalidRequestError("the request carries no operation handle")
    return OperationHandle(bytes(handle.operationId.guid), bytes(handle.operationId.secret))


_STATES = {
    OperationState.INITIALIZED: T.TOperationState.INITIALIZED_STATE,
    OperationState.PENDING: T.TOperationState.PENDING_STATE,
    OperationState.RUNNING: T.TOperationState.RUNNING_STATE,
    OperationState.FINISHED: T.TOperationState.FINISHED_STATE,
    OperationState.CANCELED: T.TOperationState.CANCELED_STATE,
    OperationState.TIMEDOUT: T.TOperationState.TIMEDOUT_STATE,
    OperationState.ERROR: T.TOperationState.ERROR_STATE,
    OperationState.CLOSED: T.TOperationState.CLOSED_STATE,
}


def to_toperation_state(state: OperationState) -> int:
    return _STATES[state]


def to_fetch_orientation(orientation: int | None) -> FetchOrientation:
    if orientation in (None, T.TFetchOrientation.FETCH_NEXT):
        return FetchOrientation.NEXT
    if orientation == T.TFetchOrientation.FETCH_FIRST:
        return FetchOrientation.FIRST
    return FetchOrientation.OTHER


_INFO_TYPES = {
    T.TGetInfoType.CLI_SERVER_NAME: InfoType.SERVER_NAME,
    T.TGetInfoType.CLI_DBMS_NAME: InfoType.DBMS_NAME,
    T.TGetInfoType.CLI_DBMS_VER: InfoType.DBMS_VERSION,
    T.TGetInfoType.CLI_MAX_IDENTIFIER_LEN: InfoType.MAX_IDENTIFIER_LENGTH,
    T.TGetInfoType.CLI_MAX_COLUMN_NAME_LEN: InfoType.MAX_COLUMN_NAME_LENGTH,
    T.TGetInfoType.CLI_MAX_TABLE_NAME_LEN: InfoType.MAX_TABLE_NAME_LENGTH,
    T.TGetInfoType.CLI_MAX_SCHEMA_NAME_LEN: InfoType.MAX_SCHEMA_NAME_LENGTH,
    T.TGetInfoType.CLI_IDENTIFIER_QUOTE_CHAR: InfoType.IDENTIFIER_QUOTE_CHAR,
    T.TGetInfoType.CLI_SEARCH_PATTERN_ESCAPE: InfoType.SEARCH_PATTERN_ESCAPE,
}


def to_info_type(info_type: int) -> InfoType:
    return _INFO_TYPES.get(info_type, InfoType.OTHER)


def to_tget_info_value(value: str | int) -> T.TGetInfoValue:
    if isinstance(value, int):
        return T.TGetInfoValue(lenValue=value)
    return T.TGetInfoValue(stringValue=value)


# -- schemas and rows -----------------------------------------------------------------------------------------


def _type_entry(spark_type: str) -> T.TTypeEntry:
    hive = hive_types.hive_type(spark_type)
    qualifiers = None
    decimal = hive_types.decimal_precision_scale(spark_type)
    if hive.hive_name == "DECIMAL" and decimal is not None:
        qualifiers = T.TTypeQualifiers(qualifiers={
            "precision": T.TTypeQualifierValue(i32Value=decimal[0]),
            "scale": T.TTypeQualifierValue(i32Value=decimal[1]),
        })
    length = hive_types.char_length(spark_type)
    if length is not None:
        qualifiers = T.TTypeQualifiers(qualifiers={"characterMaximumLength": T.TTypeQualifierValue(i32Value=length)})
    type_id = getattr(T.TTypeId, f"{hive.hive_name}_TYPE")
    return T.TTypeEntry(primitiveEntry=T.TPrimitiveTypeEntry(type=type_id, typeQualifiers=qualifiers))


def to_ttable_schema(columns: list[ResultColumn]) -> T.TTableSchema:
    return T.TTableSchema(columns=[
        T.TColumnDesc(columnName=col.name, typeDesc=T.TTypeDesc(types=[_type_entry(col.type)]), position=i,
                      comment=col.comment or "")
        for i, col in enumerate(columns, start=1)
    ])


def _nulls(array: pa.Array) -> bytes:
    if array.null_count == 0:
        return b""
    mask = array.is_null().to_numpy(zero_copy_only=False)
    return np.packbits(mask, bitorder="little").tobytes()


def _values(array: pa.Array, fill: object) -> list:
    if array.null_count:
        array = array.fill_null(fill)
    if pa.types.is_integer(array.type) or pa.types.is_float64(array.type):
        return array.to_numpy(zero_copy_only=False).tolist()
    return array.to_pylist()


def to_tcolumn(array: pa.Array) -> T.TColumn:
    kind = array.type
    nulls = _nulls(array)
    if pa.types.is_boolean(kind):
        return T.TColumn(boolVal=T.TBoolColumn(values=_values(array, False), nulls=nulls))
    if pa.types.is_int8(kind):
        return T.TColumn(byteVal=T.TByteColumn(values=_values(array, 0), nulls=nulls))
    if pa.types.is_int16(kind):
        return T.TColumn(i16Val=T.TI16Column(values=_values(array, 0), nulls=nulls))
    if pa.types.is_int32(kind):
        return T.TColumn(i32Val=T.TI32Column(values=_values(array, 0), nulls=nulls))
    if pa.types.is_int64(kind):
        return T.TColumn(i64Val=T.TI64Column(values=_values(array, 0), nulls=nulls))
    if pa.types.is_float32(kind):
        # Through the shortest decimal form: FLOAT 1.1 reaches the client as 1.1, not 1.100000023841858.
        values = [float(str(v)) for v in array.fill_null(0.0).to_numpy(zero_copy_only=False)]
        return T.TColumn(doubleVal=T.TDoubleColumn(values=values, nulls=nulls))
    if pa.types.is_floating(kind):
        return T.TColumn(doubleVal=T.TDoubleColumn(values=_values(array, 0.0), nulls=nulls))
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return T.TColumn(binaryVal=T.TBinaryColumn(values=_values(array, b""), nulls=nulls))
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        array = array.cast(pa.string())
    return T.TColumn(stringVal=T.TStringColumn(values=_values(array, ""), nulls=nulls))


def _tcolumn_value(kind: pa.DataType, value: object) -> T.TColumnValue:
    if pa.types.is_boolean(kind):
        return T.TColumnValue(boolVal=T.TBoolValue(value=value))
    if pa.types.is_int8(kind):
        return T.TColumnValue(byteVal=T.TByteValue(value=value))
    if pa.types.is_int16(kind):
        return T.TColumnValue(i16Val=T.TI16Value(value=value))
    if pa.types.is_int32(kind):
        return T.TColumnValue(i32Val=T.TI32Value(value=value))
    if pa.types.is_int64(kind):
        return T.TColumnValue(i64Val=T.TI64Value(value=value))
    if pa.types.is_float32(kind) and value is not None:
        return T.TColumnValue(doubleVal=T.TDoubleValue(value=float(str(np.float32(value)))))
    if pa.types.is_floating(kind):
        return T.TColumnValue(doubleVal=T.TDoubleValue(value=value))
    if pa.types.is_binary(kind) and value is not None:
        value = bytes(value).decode("utf-8", "replace")
    return T.TColumnValue(stringVal=T.TStringValue(value=value))


def to_trowset(block: RowBlock, protocol: int) -> T.TRowSet:
    """Columnar for V6 and later (what PyHive and the JDBC driver ask for); row-based for V1 to V5."""
    if versions.columnar(protocol):
        return T.TRowSet(startRowOffset=block.start_offset, rows=[],
                         columns=[to_tcolumn(array) for array in block.arrays])
    columns = [(array.type, array.to_pylist()) for array in block.arrays]
    rows = [T.TRow(colVals=[_tcolumn_value(kind, values[i]) for kind, values in columns])
            for i in range(block.num_rows)]
    return T.TRowSet(startRowOffset=block.start_offset, rows=rows)


def to_arrow_schema(columns: list[ResultColumn], schema: pa.Schema) -> pa.Schema:
    """The batches' schema named as the result's columns (names may repeat), every column nullable."""
    fields = zip(columns, schema, strict=True)
    return pa.schema([pa.field(col.name, field.type, nullable=True) for col, field in fields])


def to_arrow_rowset(block: ArrowBlock, schema: pa.Schema, lz4: bool) -> T.TRowSet:
    """One TSparkArrowBatch per batch: its IPC record-batch message (no schema, no end marker: the client prepends
    `arrowSchema`), one LZ4 frame when `lz4`, and its exact row count."""
    batches = []
    for batch in block.batches:
        payload = conform(batch, schema).serialize().to_pybytes()
        if lz4:
            payload = lz4_frame.compress(payload)
        batches.append(T.TSparkArrowBatch(batch=payload, rowCount=batch.num_rows))
    return T.TRowSet(startRowOffset=block.start_offset, rows=[], arrowBatches=batches)


def to_tresult_set_metadata(columns: list[ResultColumn], result_format: ResultFormat, schema: pa.Schema | None,
                            protocol: int) -> T.TGetResultSetMetadataResp:
    """The result's schema; for a Spark-protocol session also its format (the connector needs it on every result,
    DDL and listings included) and, for Arrow, the serialized Arrow schema the batches follow."""
    resp = T.TGetResultSetMetadataResp(schema=to_ttable_schema(columns))
    if not versions.is_spark(protocol):
        return resp
    if result_format.arrow and schema is not None:
        resp.resultFormat = T.TSparkRowSetType.ARROW_BASED_SET
        resp.lz4Compressed = result_format.lz4
        resp.arrowSchema = schema.serialize().to_pybytes()
    else:
        resp.resultFormat = T.TSparkRowSetType.COLUMN_BASED_SET
        resp.lz4Compressed = False
    return resp


def to_result_format(req: T.TExecuteStatementReq, protocol: int) -> ResultFormat:
    """What the request says the client reads. Arrow only in a Spark-protocol session (V5 promises Arrow metadata);
    dates always as date32 then, the other families natively only when `useArrowNativeTypes` asks."""
    if not (versions.is_spark(protocol) and req.canReadArrowResult):
        return ResultFormat()
    native = req.useArrowNativeTypes
    types = WireTypes(
        date=True,
        timestamp=bool(native and native.timestampAsArrow),
        decimal=bool(native and native.decimalAsArrow),
        nested=bool(native and native.complexTypesAsArrow),
    )
    return ResultFormat(arrow=True, lz4=bool(req.canDecompressLZ4Result), types=types)


# Hive's progress table as its Spark engine fills it; beeline's in-place display formats nine columns
PROGRESS_HEADER = ["STAGES", "ATTEMPT", "STATUS", "TOTAL", "COMPLETED", "RUNNING", "PENDING", "FAILED", ""]


def to_tprogress_update(progress: Progress, state: OperationState, started: float) -> T.TProgressUpdateResp:
    """Hive's progressUpdateResponse: a row per Spark stage of the statement, the share of its tasks done, and a
    footer counting stages (`STAGES: 01/02`); NOT_AVAILABLE while no job has started."""
    rows = [[f"Stage-{stage.stage_id}", str(stage.attempt), stage.state, str(stage.tasks), str(stage.completed),
             str(stage.active), str(max(stage.tasks - stage.completed - stage.active, 0)), str(stage.failed), ""]
            for stage in progress.stages]
    if state is OperationState.FINISHED:
        status = T.TJobExecutionStatus.COMPLETE
    elif progress.stages:
        status = T.TJobExecutionStatus.IN_PROGRESS
    else:
        status = T.TJobExecutionStatus.NOT_AVAILABLE
    done = 1.0 if state is OperationState.FINISHED else progress.fraction
    return T.TProgressUpdateResp(
        headerNames=PROGRESS_HEADER, rows=rows, progressedPercentage=done, status=status,
        footerSummary=f"STAGES: {progress.stages_done:02d}/{progress.stages_total:02d}",
        startTime=int(started * 1000))


def log_to_trowset(lines: list[str], protocol: int) -> T.TRowSet:
    block = RowBlock(0, [ResultColumn("operation_log", "string")], [pa.array(lines, type=pa.string())], False)
    return to_trowset(block, protocol)


# -- errors ---------------------------------------------------------------------------------------------------


def _excerpt(sql: str, line: int, column: int) -> str:
    lines = sql.splitlines() or [""]
    if not 1 <= line <= len(lines):
        return ""
    text = lines[line - 1]
    if len(text) > 160:  # keep the caret on screen: show a window around the column
        start = max(0, column - 80)
        text, column = text[start:start + 160], column - start
    return f"\n    {text}\n    {' ' * max(column - 1, 0)}^"


def describe(exc: BaseException, sql: str | None = None) -> str:
    """The message a client shows for an error: class, text, position with a caret, hint."""
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    error_class = getattr(exc, "error_class", None)
    if error_class and not message.startswith("["):
        message = f"[{error_class}] {message}"
    line, column = getattr(exc, "line", None), getattr(exc, "column", None)
    if line is not None and column is not None:
        message += f"\n  at line {line}, column {column}"
        if sql:
            message += ":" + _excerpt(sql, line, column)
    hint = getattr(exc, "hint", None)
    if hint:
        message += f"\n  hint: {hint}"
    detail = getattr(exc, "detail", None)
    if detail:
        message += f"\n{detail}"
    return message


def error_fields(exc: BaseException, sql: str | None = None) -> tuple[str, str, int]:
    """(message, SQLSTATE, vendor code) of any exception; unknown ones are internal errors (SQLSTATE XX000)."""
    if isinstance(exc, SqlError):
        return describe(exc, sql), exc.sqlstate or "XX000", 0
    log.error("internal error", exc_info=exc)
    # A Py4J error caught here (not by the runtime) carries the JVM stack in its text: the log has it, clients not.
    return f"[INTERNAL_ERROR] internal error in the gateway: {type(exc).__name__}: {short_message(str(exc))}", \
        "XX000", 0


def with_sqlstate(message: str, sqlstate: str | None) -> str:
    """The message with ` SQLSTATE: xxxxx` ending its first line, as Spark's own texts have it: for clients that show
    the message only (databricks-sql-connector drops the sqlState field). A text already naming one is kept."""
    if not sqlstate or "SQLSTATE:" in message:
        return message
    first, newline, rest = message.partition("\n")
    return f"{first} SQLSTATE: {sqlstate}{newline}{rest}"


def to_tstatus(exc: BaseException, sql: str | None = None) -> T.TStatus:
    message, sqlstate, code = error_fields(exc, sql)
    return T.TStatus(statusCode=T.TStatusCode.ERROR_STATUS, sqlState=sqlstate, errorCode=code, errorMessage=message)


OK_STATUS = T.TStatus(statusCode=T.TStatusCode.SUCCESS_STATUS)
