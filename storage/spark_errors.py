"""Spark's errors in the gateway's shape: Spark's own error class and SQLSTATE pass through, the message is cut to
what fits on a screen (no logical plan, no JVM stack unless asked for) and the position is read off Spark's query
context."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sluicegate.dialect.errors import SqlError

if TYPE_CHECKING:
    from pyspark.errors import QueryContext
    from pyspark.sql import Column

_PLAN_START = re.compile(r";?\s*\n\s*(?:'|\+-|==|:-|Project |Aggregate |Join |Filter |Relation |JVM stacktrace:"
                         r"|Driver stacktrace:)")
# Py4J's wrapper around a Java exception: "An error occurred while calling o123.getResult.\n: java.lang...".
_PY4J_WRAPPER = re.compile(r"An error occurred while calling [\w$.]+\.(?:\s*\n)?\s*:?\s*")
# A JVM stack frame, the "... 12 more" that ends a cause's frames, and suppressed exceptions.
_FRAME = re.compile(r"^\s*(?:at [\w$.<>/-]+\(|\.\.\. \d+ (?:more|elided)|Suppressed: )")
_CAUSED_BY = re.compile(r"^\s*Caused by:\s*")
_PARSE_POSITION = re.compile(r"\(line (\d+), pos (\d+)\)")
_MAX_LINES = 12
_COLON_HINT = "write parse_json(col):path.to.field (a VARIANT), or get_json_object(col, '$.path.to.field') (a string)"
_MAX_CAUSES = 5       # how deep a Java exception's cause chain is searched for Spark's error class
# Errors the gateway raises from inside a Spark job (`raised_in_row`: Delta's constraints, storage/constraints.py and
# storage/delta/not_null.py), by the class and SQLSTATE Databricks answers with: Spark reports each as
# USER_RAISED_EXCEPTION (P0001), or wraps it in a failed write task, so `from_spark` gives it back its own.
ROW_ERRORS = {"DELTA_NOT_NULL_CONSTRAINT_VIOLATED": "23502", "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES": "23001",
              "EXCEED_LIMIT_LENGTH": "54006"}
_ROW_ERROR = re.compile(r"\[(" + "|".join(ROW_ERRORS) + r")\] ?(.*?)(?:\s*SQLSTATE: P0001|$)", re.DOTALL)


class RuntimeQueryError(SqlError):
    """A statement failed inside Spark or the runtime around it. Subclasses fix `error_class` and `sqlstate`."""

    error_class = "SPARK_ERROR"
    sqlstate = "XX000"


def _position_from_offset(sql: str, offset: int) -> tuple[int, int]:
    before = sql[:offset]
    line = before.count("\n") + 1
    column = offset - (before.rfind("\n") + 1) + 1
    return line, column


def short_message(text: str) -> str:
    """Spark appends the logical plan and sometimes a stack trace, Py4J its own wrapper; a client wants the first
    sentences and never a JVM frame (internals are for the log, or for errors.include_stack_trace = true)."""
    match = _PLAN_START.search(text)
    if match:
        text = text[: match.start()]
    text = _PY4J_WRAPPER.sub("", text)
    lines: list[str] = []
    for line in text.strip().splitlines():
        if _FRAME.match(line):
            continue
        if _CAUSED_BY.match(line):  # the first cause, in one line, says what went wrong; the rest of the chain not
            lines.append(line.strip())
            break
        lines.append(line.rstrip())
    lines = [line for line in lines if line.strip()] or ["the statement failed inside Spark"]
    if len(lines) > _MAX_LINES:
        lines = [*lines[:_MAX_LINES], "..."]
    return "\n".join(lines)


def _offset_from_line(sql: str, line: int, column: int) -> int:
    lines = sql.split("\n")
    return sum(len(text) + 1 for text in lines[: line - 1]) + column - 1


def from_spark(
    exc: BaseException,
    sql: str | None = None,
    *,
    include_stack_trace: bool = False,
    original: str | None = None,
    to_original: Callable[[int], int] | None = None,
) -> RuntimeQueryError:
    """Translate a PySpark exception (a CapturedException, a Py4J error or any other) into a RuntimeQueryError.

    `sql` is the text Spark ran. When the gateway rewrote the user's statement first, `original` is what the user
    typed and `to_original` maps offsets in `sql` into it, so the position points at what the user wrote.
    """
    error_class, sqlstate = _condition(exc)
    raw = getattr(exc, "getMessage", None)
    try:
        message = raw() if callable(raw) else str(exc)
    except Exception:  # noqa: BLE001
        message = str(exc)
    if error_class is None:  # a Java exception PySpark did not convert (a write job's, inside foreachBatch)
        error_class, sqlstate, message = _java_error(exc) or (None, None, message)
    message = message or _python_error(str(exc)) or type(exc).__name__
    offset = None
    if sql is not None:
        offset = next((start for start in map(_start_index, _query_contexts(exc)) if start is not None), None)
        if offset is None:
            found = _PARSE_POSITION.search(message) or _PARSE_POSITION.search(str(exc))
            if found:
                offset = _offset_from_line(sql, int(found.group(1)), int(found.group(2)) + 1)
    line = column = None
    if offset is not None and sql is not None:
        text = sql
        if original is not None and to_original is not None:
            offset, text = to_original(offset), original
        line, column = _position_from_offset(text, offset)
    short = short_message(message)
    hint = None
    raised = _raised_in_row(exc, message)
    if raised is not None:  # one of the gateway's own errors, raised in a row (a write's constraint); the message
        # keeps its `[CLASS]`, so a stream's last error names it too
        error_class, sqlstate = raised.group(1), ROW_ERRORS[raised.group(1)]
        short = short_message(f"[{error_class}] {raised.group(2)}")
    if "'COLUMN_IS_NOT_VARIANT_TYPE'" in message:  # Spark 4.1 lacks this class's text: its INTERNAL_ERROR says so
        error_class, sqlstate, hint = "COLUMN_IS_NOT_VARIANT_TYPE", "42K09", _COLON_HINT
        short = "the `col:path` syntax reads VARIANT columns only in Spark; this column is a string"
    if error_class is None:
        error_class = "SPARK_ERROR" if type(exc).__module__.startswith(("pyspark", "py4j")) else "INTERNAL_ERROR"
    detail = None
    if include_stack_trace:
        detail = getattr(exc, "_stackTrace", None) or getattr(exc, "java_exception", None)
        detail = str(detail) if detail is not None else None
    return RuntimeQueryError(
        short, error_class=error_class, sqlstate=sqlstate or "XX000", line=line, column=column, detail=detail,
        hint=hint,
    )


def raised_in_row(error_class: str, message: Column) -> Column:
    """A Spark expression failing the job with one of `ROW_ERRORS` and `message` (a string column), which
    `from_spark` reports as that class and SQLSTATE."""
    from pyspark.sql import functions as F

    return F.raise_error(F.concat(F.lit(f"[{error_class}] "), message))


def _raised_in_row(exc: BaseException, message: str) -> re.Match[str] | None:
    """The `raised_in_row` error in `exc`: in its message, or in one of its Java causes' (a write job wraps the
    task's error in its own, TASK_WRITE_FAILED)."""
    found = _ROW_ERROR.search(message) or _ROW_ERROR.search(str(exc))
    java: Any = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)  # a Py4J object: untyped
    for _ in range(_MAX_CAUSES):
        if found is not None or java is None:
            return found
        try:
            found = _ROW_ERROR.search(str(java.getMessage() or ""))
            java = java.getCause()
        except Exception:  # noqa: BLE001 - not a Throwable, or the Py4J connection is gone
            return None
    return found


def _python_error(text: str) -> str | None:
    """The last line of a Python worker's traceback (`FileNotFoundError: ...`): what a function Spark ran on an
    executor raised. PySpark's PythonException has no message of its own, only the traceback in its text."""
    if "Traceback (most recent call last)" not in text:
        return None
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else None


def _condition(exc: Any) -> tuple[str | None, str | None]:
    """Spark's error class and SQLSTATE of a PySpark exception or a Java SparkThrowable (a Py4J object, untyped), if
    it has them."""
    get_condition = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    if get_condition is None:
        return None, None
    try:
        return get_condition(), exc.getSqlState()
    except Exception:  # noqa: BLE001 - a half-initialised py4j error, or a Java exception without a class
        return None, None


def _java_error(exc: BaseException) -> tuple[str, str | None, str] | None:
    """(error class, SQLSTATE, message) of the first Spark error with a class in the Java exception's cause chain
    (a Py4JJavaError's, or one PySpark captured without a class: "Exception thrown in awaitResult"): Spark's
    message, then the first line of its cause (which says what the record or value was)."""
    java: Any = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)  # a Py4J object: untyped
    error_class = sqlstate = None
    for _ in range(_MAX_CAUSES):
        if java is None:
            return None
        error_class, sqlstate = _condition(java)
        if error_class:
            break
        try:
            java = java.getCause()
        except Exception:  # noqa: BLE001 - not a Throwable, or the Py4J connection is gone
            return None
    if not error_class:
        return None
    try:
        message = str(java.getMessage())
        cause = java.getCause()
        if cause is not None and cause.getMessage():
            message += "\nCaused by: " + str(cause.getMessage()).strip().splitlines()[0]
    except Exception:  # noqa: BLE001 - the Py4J connection may be gone; the class alone still says what happened
        message = str(exc)
    return error_class, sqlstate, message


def _start_index(context: QueryContext) -> int | None:
    """Where a SQL query context starts in the text Spark ran; None for a DataFrame context (a `df.select` of the
    gateway's own, whose startIndex() raises UNSUPPORTED_CALL) or one that cannot be read."""
    try:
        start = context.startIndex()
    except Exception:  # noqa: BLE001 - the position is a nicety; the error itself must still be reported
        return None
    return start if isinstance(start, int) and start >= 0 else None


def _query_contexts(exc: BaseException) -> list[QueryContext]:
    get_contexts = getattr(exc, "getQueryContext", None)
    if get_contexts is None:
        return []
    try:
        return list(get_contexts())
    except Exception:  # noqa: BLE001 - the context is a nicety; the error itself must still be reported
        return []
