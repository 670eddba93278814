"""A HiveServer2 connection for the shell: PyHive's generated Thrift client over SASL PLAIN, decoded by thrift's C
codec (pure-Python decoding costs seconds of CPU per million rows).

Statements run asynchronously and are polled, so that Ctrl-C (a flag set by the signal handler, checked between
short calls) can send CancelOperation; results are fetched a batch at a time and never held whole.
"""

from __future__ import annotations

import ast
import logging
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sluicegate.gateway.thrift import enable_fast_codec

enable_fast_codec()

import thrift_sasl  # noqa: E402 - after the codec patch, as every user of the generated types
from pyhive.hive import get_installed_sasl  # noqa: E402
from TCLIService import TCLIService  # noqa: E402
from TCLIService import ttypes as T  # noqa: E402
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated  # noqa: E402
from thrift.Thrift import TException  # noqa: E402
from thrift.transport.TSocket import TSocket  # noqa: E402
from thrift.transport.TSSLSocket import TSSLSocket  # noqa: E402
from thrift.transport.TTransport import TTransportException  # noqa: E402

from sluicegate.gateway.shell.errors import AuthenticationRefused, ConnectError, ServerError, StatementCanceled  # noqa: E402
from sluicegate.gateway.shell.progress import AFTER_SECONDS, ProgressLine, from_update  # noqa: E402

log = logging.getLogger(__name__)

_OK = (T.TStatusCode.SUCCESS_STATUS, T.TStatusCode.SUCCESS_WITH_INFO_STATUS)
_RUNNING = (T.TOperationState.INITIALIZED_STATE, T.TOperationState.PENDING_STATE, T.TOperationState.RUNNING_STATE)
_NUMERIC = {getattr(T.TTypeId, name) for name in ("TINYINT_TYPE", "SMALLINT_TYPE", "INT_TYPE", "BIGINT_TYPE",
                                                   "FLOAT_TYPE", "DOUBLE_TYPE", "DECIMAL_TYPE")}
# SASL status bytes the server answers a refused handshake with (BAD, ERROR).
_SASL_REFUSED = ("Bad status: 3 ", "Bad status: 4 ")
NO_PASSWORD = "x"  # SASL PLAIN needs a non-empty password; a server without authentication ignores it
FETCH_ROWS = 1000
_POLL_FIRST, _POLL_MAX = 0.002, 0.1
# Hive's setting of how long GetOperationStatus holds a running statement's poll: a second, so that the progress
# line moves and a Ctrl-C is seen within one (the server's own wait, `operation.long_polling_timeout`, is longer)
LONG_POLL_KEY, LONG_POLL = "hive.server2.long.polling.timeout", "1000ms"
APPLICATION = "sluicegate shell"   # the session's `client_application` (system.query.history, system.runtime.sessions)


@dataclass(frozen=True)
class Column:
    name: str
    type_name: str
    numeric: bool


@dataclass
class Result:
    """A finished statement: columns (empty when it returned no result set) and its rows, batch by batch."""

    columns: list[Column]
    batches: Iterator[list[tuple[Any, ...]]]

    def close(self) -> None:
        """Stop reading; the server frees the operation (the fetch generator closes it)."""
        close = getattr(self.batches, "close", None)
        if close is not None:
            close()


def _check(resp: Any) -> Any:
    status = resp.status
    if status.statusCode not in _OK:
        raise ServerError(status.errorMessage or "the server reported an error without a message",
                          sqlstate=status.sqlState or "XX000")
    return resp


def _column_values(column: T.TColumn) -> list[Any]:
    for field in ("boolVal", "byteVal", "i16Val", "i32Val", "i64Val", "doubleVal", "stringVal", "binaryVal"):
        typed = getattr(column, field)
        if typed is not None:
            values = list(typed.values)
            nulls = typed.nulls or b""
            for index, byte in enumerate(nulls):
                if byte:
                    for bit in range(8):
                        row = index * 8 + bit
                        if byte >> bit & 1 and row < len(values):
                            values[row] = None
            return values
    return []


def _type_name(desc: T.TTypeDesc) -> str:
    entry = desc.types[0]
    if entry.primitiveEntry is not None:
        return T.TTypeId._VALUES_TO_NAMES[entry.primitiveEntry.type].removesuffix("_TYPE")
    return "COMPLEX"


def _columns(schema: T.TTableSchema | None) -> list[Column]:
    if schema is None:
        return []
    columns = []
    for desc in schema.columns or []:
        entry = desc.typeDesc.types[0].primitiveEntry
        columns.append(Column(desc.columnName, _type_name(desc.typeDesc),
                              entry is not None and entry.type in _NUMERIC))
    return columns


class HiveClient:
    """One session on a HiveServer2 server. Not thread-safe: one statement at a time, as in a shell."""

    def __init__(self, host: str, port: int, user: str, password: str | None, database: str,
                 interrupted: threading.Event | None = None, timeout: float = 30.0, *, tls: bool = False,
                 tls_ca: str | None = None, variables: dict[str, str] | None = None) -> None:
        """`tls`: connect with TLS, verifying the server's certificate against `tls_ca` (a PEM file) or, without
        it, the system's trusted CAs. `variables`: session variables (`${name}` in statements), as beeline's
        `--hivevar name=value`."""
        self.host, self.port, self.user, self.password = host, port, user, password
        self.tls, self.tls_ca = tls or tls_ca is not None, tls_ca
        self.database = database
        self.variables = dict(variables or {})
        self.interrupted = interrupted or threading.Event()
        self._timeout = timeout
        self._transport: thrift_sasl.TSaslClientTransport | None = None
        self._client: TCLIService.Client | None = None
        self._session: T.TSessionHandle | None = None
        self.progress: ProgressLine | None = None  # the line a long statement shows on a terminal (the shell's)

    # -- connection -------------------------------------------------------------------------------------------

    def connect(self) -> None:
        """Open the transport and a session in `self.database`. Raises ConnectError or AuthenticationRefused."""
        sock = self._socket()
        sock.setTimeout(self._timeout * 1000)
        password = self.password or NO_PASSWORD
        transport = thrift_sasl.TSaslClientTransport(
            lambda: get_installed_sasl(host=self.host, sasl_auth="PLAIN", username=self.user, password=password),
            "PLAIN", sock)
        try:
            transport.open()
        except TTransportException as exc:
            if sock.handle is not None:  # TSSLSocket.close fails on a socket that never opened
                transport.close()
            text = str(exc)
            if text.startswith(_SASL_REFUSED):
                raise AuthenticationRefused(
                    f"cannot connect to {self.host}:{self.port} as {self.user}: {_sasl_reason(text)}") from exc
            raise ConnectError(f"cannot connect to {self.host}:{self.port}: {_socket_reason(exc)}") from exc
        sock.setTimeout(None)  # statements may take long; Ctrl-C, not a timeout, ends a wait
        self._transport = transport
        self._client = TCLIService.Client(TBinaryProtocolAccelerated(transport))
        try:
            resp = self._call("OpenSession", T.TOpenSessionReq(
                client_protocol=T.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V6, username=self.user,
                password=self.password, configuration={
                    "use:database": self.database, f"set:hiveconf:{LONG_POLL_KEY}": LONG_POLL,
                    "client_application": APPLICATION,
                    **{f"set:hivevar:{name}": value for name, value in self.variables.items()}}))
        except ServerError:
            self.close()
            raise
        self._session = resp.sessionHandle

    def _socket(self) -> TSocket:
        if not self.tls:
            return TSocket(self.host, self.port)
        try:
            context = ssl.create_default_context(cafile=self.tls_ca)
        except (OSError, ssl.SSLError) as exc:
            raise ConnectError(f"cannot use {self.tls_ca} as the CA file: {exc}",
                               hint="give a PEM file with the certificate that signed the server's") from exc
        return TSSLSocket(self.host, self.port, ssl_context=context, server_hostname=self.host)

    def close(self) -> None:
        """Close the session and the connection; safe to call twice and after the server went away."""
        try:
            if self._session is not None and self._client is not None:
                self._client.CloseSession(T.TCloseSessionReq(sessionHandle=self._session))
        except (TException, OSError, EOFError) as exc:
            log.debug("closing the session failed; the server is gone, so nothing is left open there: %s", exc)
        finally:
            self._session = None
            if self._transport is not None:
                self._transport.close()
            self._transport = self._client = None

    def reconnect(self) -> None:
        """After a connection broke (a second Ctrl-C mid-call), start over with a fresh session."""
        self.close()
        self.connect()

    def _call(self, method: str, request: Any) -> Any:
        if self._client is None:
            raise ConnectError("not connected", hint="the next statement reconnects")
        try:
            return _check(getattr(self._client, method)(request))
        except (TException, OSError, EOFError) as exc:
            self._drop()
            raise ConnectError(f"lost the connection to {self.host}:{self.port}: {exc}",
                               hint="the next statement reconnects") from exc
        except KeyboardInterrupt:
            self._drop()  # a reply may be half read: the stream cannot be trusted any more
            raise

    def _drop(self) -> None:
        self._session = None
        if self._transport is not None:
            self._transport.close()
        self._client = self._transport = None

    def ensure_connected(self) -> None:
        if self._client is None:
            self.connect()

    # -- statements -------------------------------------------------------------------------------------------

    def execute(self, sql: str) -> Result:
        """Run one statement to completion (cancelling it on Ctrl-C) and return its result set, still unfetched."""
        self.ensure_connected()
        resp = self._call("ExecuteStatement", T.TExecuteStatementReq(
            sessionHandle=self._session, statement=sql, runAsync=True, confOverlay={}))
        return self._finish(resp.operationHandle)

    def tables(self, schema: str | None, pattern: str | None) -> Result:
        self.ensure_connected()
        resp = self._call("GetTables", T.TGetTablesReq(sessionHandle=self._session, schemaName=schema,
                                                        tableName=pattern))
        return self._finish(resp.operationHandle)

    def schemas(self, pattern: str | None) -> Result:
        self.ensure_connected()
        resp = self._call("GetSchemas", T.TGetSchemasReq(sessionHandle=self._session, schemaName=pattern))
        return self._finish(resp.operationHandle)

    def columns(self, schema: str | None, table: str) -> Result:
        self.ensure_connected()
        resp = self._call("GetColumns", T.TGetColumnsReq(sessionHandle=self._session, schemaName=schema,
                                                          tableName=table))
        return self._finish(resp.operationHandle)

    def _finish(self, handle: T.TOperationHandle) -> Result:
        status = self._wait(handle)
        has_result = status.hasResultSet if status.hasResultSet is not None else handle.hasResultSet
        if not has_result:
            self._close_operation(handle)
            return Result([], iter(()))
        try:
            meta = self._call("GetResultSetMetadata", T.TGetResultSetMetadataReq(operationHandle=handle))
        except ServerError:
            self._close_operation(handle)
            raise
        columns = _columns(meta.schema)
        if not columns:
            self._close_operation(handle)
            return Result([], iter(()))
        return Result(columns, self._fetch(handle, len(columns)))

    def _wait(self, handle: T.TOperationHandle) -> T.TGetOperationStatusResp:
        delay = _POLL_FIRST
        line = self.progress if self.progress is not None and self.progress.enabled else None
        started = time.monotonic()
        try:
            while True:
                if self.interrupted.is_set():
                    self._cancel(handle)
                # answered when the statement ends or after the session's long-poll wait (LONG_POLL, see connect)
                status = self._call("GetOperationStatus", T.TGetOperationStatusReq(
                    operationHandle=handle, getProgressUpdate=True if line is not None else None))
                state = status.operationState
                if state not in _RUNNING:
                    break
                elapsed = time.monotonic() - started
                if line is not None and elapsed >= AFTER_SECONDS:
                    line.show(from_update(status.progressUpdateResponse), elapsed)
                self.interrupted.wait(delay)
                delay = min(delay * 2, _POLL_MAX)
        finally:
            if line is not None:
                line.clear()
        if state == T.TOperationState.FINISHED_STATE:
            return status
        self._close_operation(handle)
        if state == T.TOperationState.CANCELED_STATE:
            raise StatementCanceled("the statement was cancelled")
        raise ServerError(status.errorMessage or "the statement failed without a message",
                          sqlstate=status.sqlState or "XX000")

    def _fetch(self, handle: T.TOperationHandle, width: int) -> Iterator[list[tuple[Any, ...]]]:
        """Batches of rows until the result ends. Closing the generator early closes the operation."""
        try:
            while True:
                if self.interrupted.is_set():
                    self._cancel(handle)
                resp = self._call("FetchResults", T.TFetchResultsReq(
                    operationHandle=handle, orientation=T.TFetchOrientation.FETCH_NEXT, maxRows=FETCH_ROWS))
                rowset = resp.results
                if rowset.columns:
                    columns = [_column_values(column) for column in rowset.columns]
                    rows = list(zip(*columns, strict=False)) if len(columns) == width else []
                else:  # a server speaking the row-based protocol (V1 to V5)
                    rows = [tuple(_row_value(value) for value in row.colVals) for row in rowset.rows or []]
                if rows:
                    yield rows
                if not rows or (not resp.hasMoreRows and len(rows) < FETCH_ROWS):
                    return
        finally:
            self._close_operation(handle)

    def _cancel(self, handle: T.TOperationHandle) -> None:
        self.interrupted.clear()
        self._call("CancelOperation", T.TCancelOperationReq(operationHandle=handle))
        self._close_operation(handle)
        raise StatementCanceled("the statement was cancelled")

    def _close_operation(self, handle: T.TOperationHandle) -> None:
        if self._client is None:
            return
        try:
            self._call("CloseOperation", T.TCloseOperationReq(operationHandle=handle))
        except ServerError as exc:
            log.debug("the server had already closed the operation (a failure or a cancel does): %s", exc)


def _row_value(value: T.TColumnValue) -> Any:
    for field in ("boolVal", "byteVal", "i16Val", "i32Val", "i64Val", "doubleVal", "stringVal"):
        typed = getattr(value, field)
        if typed is not None:
            return typed.value
    return None


def _sasl_reason(text: str) -> str:
    """thrift_sasl's "Bad status: 4 (b'why')" as the server's own words."""
    match = re.search(r"\((b(['\"]).*\2)\)$", text, re.DOTALL)
    if match is None:
        return text
    try:
        return ast.literal_eval(match.group(1)).decode("utf-8", "replace")
    except (ValueError, SyntaxError):
        return text


def _socket_reason(exc: TTransportException) -> str:
    inner = exc.inner if hasattr(exc, "inner") and exc.inner is not None else None
    if isinstance(inner, socket.timeout):
        return "timed out"
    if isinstance(inner, ssl.SSLCertVerificationError):
        return f"the server's TLS certificate is not trusted ({inner.verify_message}); pass its CA with --tls-ca FILE"
    if isinstance(inner, ssl.SSLError):
        return f"TLS failed ({inner.reason or inner}); is the server started with server.tls_cert?"
    if isinstance(inner, OSError) and inner.strerror:
        return inner.strerror
    return str(exc.message or exc)
