"""Errors of running streams, in the runtime's shape (error class, SQLSTATE, hint)."""

from __future__ import annotations

from runtime.errors import RuntimeQueryError


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


class SourceRewrittenError(StreamError):
    """A commit of a streamed Delta table removed files: its rows were rewritten, not appended."""

    error_class = "DELTA_SOURCE_TABLE_REWRITTEN"
    sqlstate = "55019"


class StreamDefinitionError(StreamError):
    """The query runs in Spark but its result cannot be the table (columns, names, mode)."""

    error_class = "STREAMING_TABLE_DEFINITION"
    sqlstate = "42000"


class StreamStopTimeoutError(StreamError):
    """A micro-batch (its Delta commit) outlived the wait for the stream to stop: nothing was removed."""

    error_class = "STREAM_STOP_TIMEOUT"
    sqlstate = "57014"
