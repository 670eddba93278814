"""Errors of running streams, in the runtime's shape (error class, SQLSTATE, hint), and what a failure's errors say
about retrying it."""

from __future__ import annotations

import re
import threading

from sluicegate.dialect.errors import SqlError
from sluicegate.engine.streams.expectations import ExpectationViolationError
from sluicegate.storage.delta import not_null
from sluicegate.storage.spark_errors import ROW_ERRORS, RuntimeQueryError


class StreamError(RuntimeQueryError):
    error_class = "STREAM_FAILED"
    sqlstate = "XX000"


class SourceSchemaError(StreamError):
    """read_files without `schema =>` over a folder with nothing to infer a schema from."""

    error_class = "STREAMING_SOURCE_SCHEMA_UNKNOWN"
    sqlstate = "42KD9"


class SourceNotFoundError(StreamError):
    error_class = "STREAMING_SOURCE_NOT_FOUND"
    sqlstate = "42P01"


class RaisedInBatch:
    """For errors raised inside a micro-batch (a data source's reader, the sink): Spark hands the stream's listener
    only their text, so the text carries the error class and the hint, as Spark's own errors do."""

    error_class: str
    message: str
    hint: str | None

    def __str__(self) -> str:
        return f"[{self.error_class}] {self.message}" + (f" Hint: {self.hint}" if self.hint else "")


class SourceRewrittenError(RaisedInBatch, StreamError):
    """A commit of a streamed Delta table removed files: its rows were rewritten, not appended."""

    error_class = "DELTA_SOURCE_TABLE_REWRITTEN"
    sqlstate = "55019"


class KafkaReadError(RaisedInBatch, StreamError):
    """read_kafka could not reach the brokers or read a range of offsets (retried, as a transient failure)."""

    error_class = "KAFKA_READ_FAILED"
    sqlstate = "08006"


class KafkaDataLossError(RaisedInBatch, StreamError):
    """Offsets a batch must read are gone from the brokers (retention, a recreated topic), with failOnDataLoss."""

    error_class = "KAFKA_DATA_LOSS"
    sqlstate = "22000"


class StreamDefinitionError(StreamError):
    """The query runs in Spark but its result cannot be the table (columns, names, mode)."""

    error_class = "STREAMING_TABLE_DEFINITION"
    sqlstate = "42000"


class StreamStopTimeoutError(StreamError):
    """A micro-batch (its Delta commit) outlived the wait for the stream to stop: nothing was removed."""

    error_class = "STREAM_STOP_TIMEOUT"
    sqlstate = "57014"


# A failure of one of these error classes repeats however often the batch is retried (a rule the data breaks, a
# source rewritten under the stream, a null in a NOT NULL column): the stream is FAILED at once instead of being
# retried.
NON_RETRYABLE_ERROR_CLASSES = frozenset({"EXPECTATION_VIOLATION", SourceRewrittenError.error_class,
                                         KafkaDataLossError.error_class, not_null.ERROR_CLASS})

# Spark's and the expectations' error texts start with `[ERROR_CLASS]` or `[ERROR_CLASS.SUB_CLASS]`.
_BRACKETED_CLASS = re.compile(r"\[([A-Z][A-Z0-9_]*)(?:\.[A-Z0-9_]+)*\]")
# A stream error raised in Python inside the batch reaches the listener as its class name, not its error class.
_PYTHON_CLASSES = {cls.__name__: cls.error_class for cls in (SourceRewrittenError, KafkaReadError, KafkaDataLossError)}


class BatchErrors:
    """The error class of the gateway's typed error that ended each stream's micro-batch, by stream id.

    The Delta sink runs in the gateway's own Python (foreachBatch), but Spark hands the stream's listener only the
    failure's text, wrapped in a Java exception. The sink records its error's class here before the error leaves for
    Spark, and the retry decision takes it back by the stream's id. A failure nothing recorded (Spark's own, and the
    errors of the Python sources, which run in Spark's Python workers) is judged by its text."""

    def __init__(self) -> None:
        self._lock = threading.Lock()     # batches record on Spark's callback threads; the supervisor takes
        self._classes: dict[str, str] = {}

    def record(self, stream_id: str, error: SqlError) -> None:
        with self._lock:
            self._classes[stream_id] = error.error_class

    def take(self, stream_id: str) -> str | None:
        """The recorded class, forgotten as it is read: it explains one failure only."""
        with self._lock:
            return self._classes.pop(stream_id, None)


RAISED_IN_BATCH = BatchErrors()


def error_classes_in(message: str) -> set[str]:
    """The error classes a failure's text names: `[CLASS...]` as Spark writes them, or a stream error's class."""
    found = set(_BRACKETED_CLASS.findall(message))
    found |= {error_class for name, error_class in _PYTHON_CLASSES.items() if name in message}
    found |= {name for name in NON_RETRYABLE_ERROR_CLASSES if name in message}
    return found


def failure_classes(message: str, raised_class: str | None = None) -> set[str]:
    """The error classes of a failure: the class of the typed error the batch raised (`raised_class`, without its
    sub-class: EXPECTATION_VIOLATION.FAIL_UPDATE is EXPECTATION_VIOLATION) or, when none was recorded, those its
    text names."""
    if raised_class is not None:
        return {raised_class.split(".")[0]}
    return error_classes_in(message)


def retryable(message: str, raised_class: str | None = None) -> bool:
    """Whether another attempt on the same batch could succeed (False: fail the stream at once)."""
    return not (failure_classes(message, raised_class) & NON_RETRYABLE_ERROR_CLASSES)


_SQLSTATE = re.compile(r"SQLSTATE: ([0-9A-Z]{5})")
# The SQLSTATE of the classes whose text does not end with it as Spark's do: the gateway's own errors in a batch.
_SQLSTATES = {cls.error_class.split(".")[0]: cls.sqlstate for cls in (
    SourceRewrittenError, KafkaReadError, KafkaDataLossError, ExpectationViolationError)} | ROW_ERRORS


def stream_failure(text: str) -> StreamError:
    """A stream's stored failure (its `last_error`, `[CLASS] message` as Spark and the gateway write it) as an error
    of that class and SQLSTATE, for a statement that waited on the stream (CREATE's first update)."""
    found = _BRACKETED_CLASS.search(text)
    error_class = found.group(0)[1:-1] if found is not None else StreamError.error_class
    state = _SQLSTATE.search(text)
    sqlstate = _SQLSTATES.get(error_class.split(".")[0]) or (state.group(1) if state is not None else
                                                             StreamError.sqlstate)
    return StreamError(text, error_class=error_class, sqlstate=sqlstate,
                       hint="the table is created and its stream is FAILED: fix the input or the definition, then "
                            "REFRESH STREAMING TABLE (or CREATE OR REFRESH) starts it again; DESCRIBE STREAMING "
                            "TABLE shows its attempts and events")
