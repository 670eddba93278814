"""Errors of running streams, in the runtime's shape (error class, SQLSTATE, hint)."""

from __future__ import annotations

import re

from sluicegate.storage.spark_errors import RuntimeQueryError


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
# source rewritten under the stream): the stream is FAILED at once instead of being retried.
NON_RETRYABLE_ERROR_CLASSES = frozenset({"EXPECTATION_VIOLATION", SourceRewrittenError.error_class,
                                         KafkaDataLossError.error_class})

# Spark's and the expectations' error texts start with `[ERROR_CLASS]` or `[ERROR_CLASS.SUB_CLASS]`.
_BRACKETED_CLASS = re.compile(r"\[([A-Z][A-Z0-9_]*)(?:\.[A-Z0-9_]+)*\]")
# A stream error raised in Python inside the batch reaches the listener as its class name, not its error class.
_PYTHON_CLASSES = {cls.__name__: cls.error_class for cls in (SourceRewrittenError, KafkaReadError, KafkaDataLossError)}


def error_classes_in(message: str) -> set[str]:
    """The error classes a failure's text names: `[CLASS...]` as Spark writes them, or a stream error's class."""
    found = set(_BRACKETED_CLASS.findall(message))
    found |= {error_class for name, error_class in _PYTHON_CLASSES.items() if name in message}
    found |= {name for name in NON_RETRYABLE_ERROR_CLASSES if name in message}
    return found


def retryable(message: str) -> bool:
    """Whether another attempt on the same batch could succeed (False: fail the stream at once)."""
    return not (error_classes_in(message) & NON_RETRYABLE_ERROR_CLASSES)
