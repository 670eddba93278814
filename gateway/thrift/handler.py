"""The TCLIService handler: one thin method per RPC (Thrift's names), domain calls in between conversions.

One handler serves one connection: it knows the SASL user of that connection and the sessions opened on it, which
are closed when the connection drops. The `rpc` decorator turns every exception into the response's TStatus, so
nothing ever escapes into the Thrift library and a failed request never ends the connection.

A session of a Databricks client (a Spark protocol version) also gets what those clients need: its namespace and
`canUseMultipleCatalogs` at OpenSession, `resultFormat` on every result's metadata, the metadata again in
FetchResults when asked, Arrow results when the statement asks, and direct results: a statement that ends within
`operation.databricks_long_polling_timeout` is answered with its status, metadata and first rows in the same
response. Their error messages carry the SQLSTATE in the text too: the connector shows the message only.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from sluicegate.dialect import catalogs
from sluicegate.gateway.client_application import client_application
from sluicegate.gateway.errors import FeatureNotSupportedError, OperationCanceledError
from sluicegate.gateway.handles import OperationHandle, SessionHandle
from sluicegate.gateway.operation.base import FetchOrientation, Operation
from sluicegate.gateway.operation.state import OperationState
from sluicegate.gateway.service import GatewayService
from sluicegate.gateway.thrift import convert, generated
from sluicegate.gateway.thrift import protocol as versions
from sluicegate.gateway.thrift.generated import ttypes as T

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


def rpc(response_type: type) -> Callable[[F], F]:
    def wrap(method: F) -> F:
        @functools.wraps(method)
        def call(self: TCLIServiceHandler, req: Any) -> Any:
            try:
                resp = method(self, req)
                if resp.status is None:
                    resp.status = convert.OK_STATUS
                return resp
            except Exception as exc:  # noqa: BLE001 - every failure is answered as a status
                log.debug("%s failed: %s", method.__name__, exc)
                status = convert.to_tstatus(exc, self.statement_of(req))
                if self.from_databricks_client(req):
                    status.errorMessage = convert.with_sqlstate(status.errorMessage, status.sqlState)
                return response_type(status=status)

        return call  # type: ignore[return-value]

    return wrap


class TCLIServiceHandler:
    def __init__(self, service: GatewayService, peer: str, sasl_user: str | None, sasl_password: str | None,
                 hung_up: Callable[[float], bool] | None = None, *, address: str = "",
                 refusal: Exception | None = None, on_session_opened: Callable[[], None] | None = None,
                 user_agent: str | None = None) -> None:
        """`hung_up(timeout)` waits up to `timeout` seconds and tells whether the client closed its connection.
        `address`: the client's IP (login throttling). `refusal`: the error every OpenSession gets (a connection
        over a cap). `on_session_opened`: told after each successful OpenSession (ends the handshake timeout).
        `user_agent`: the HTTP request's User-Agent (the HTTP port), one of the names a session's application gets."""
        self.service = service
        self.peer = peer
        self.address = address
        self._refusal = refusal
        self._on_session_opened = on_session_opened
        self.sasl_user = sasl_user
        self.sasl_password = sasl_password
        self._hung_up = hung_up
        self.user_agent = user_agent
        self._sessions: set[SessionHandle] = set()
        self._lock = threading.Lock()

    def statement_of(self, req: Any) -> str | None:
        """The SQL behind a request, so that an error's position can be shown in it."""
        statement = getattr(req, "statement", None)
        if statement is None and getattr(req, "operationHandle", None) is not None:
            try:
                return self.service.operation(convert.to_operation_handle(req.operationHandle)).statement
            except Exception:  # noqa: BLE001 - the handle is already known to be bad; no excerpt then
                return None
        return statement

    def from_databricks_client(self, req: Any) -> bool:
        """Whether a request comes from a Databricks client: it asks for, or its session speaks, a Spark version."""
        try:
            if isinstance(req, T.TOpenSessionReq):
                return versions.is_spark(versions.client_version(req.client_protocol, req.client_protocol_i64))
            if getattr(req, "sessionHandle", None) is not None:
                return versions.is_spark(self.service.sessions.get(convert.to_session_handle(req.sessionHandle))
                                         .protocol)
            if getattr(req, "operationHandle", None) is not None:
                operation = self.service.operation(convert.to_operation_handle(req.operationHandle))
                return versions.is_spark(operation.session.protocol)
        except Exception:  # noqa: BLE001 - an unknown handle or no version: the error is answered as it is
            return False
        return False

    @contextlib.contextmanager
    def _watching_for_hang_up(self) -> Iterator[None]:
        """While a synchronous call blocks this connection's thread, nobody reads the socket: a client killed
        meanwhile would leave its statement running for hours. A watcher closes the connection's sessions (which
        cancels their work) as soon as the client hangs up."""
        if self._hung_up is None:
            yield
            return
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                if self._hung_up(0.2):
                    log.info("connection %s: the client hung up during a synchronous statement", self.peer)
                    self.connection_closed()
                    return

        watcher = threading.Thread(target=watch, name=f"sluicegate-hangup-{self.peer}", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            done.set()  # not joined: it ends at its next look, and waiting for that would add its poll to every call

    def connection_closed(self) -> None:
        with self._lock:
            sessions, self._sessions = list(self._sessions), set()
        for handle in sessions:
            self.service.sessions.close_quietly(handle)

    # -- sessions ------------------------------------------------------------------------------------------------

    @rpc(T.TOpenSessionResp)
    def OpenSession(self, req: T.TOpenSessionReq) -> T.TOpenSessionResp:
        if self._refusal is not None:
            raise self._refusal
        protocol = versions.negotiate(versions.client_version(req.client_protocol, req.client_protocol_i64))
        if self.sasl_user is not None:
            user, authenticated, password = self.sasl_user, True, self.sasl_password
        else:
            user, authenticated, password = req.username or "anonymous", False, req.password
        namespace = req.initialNamespace or T.TNamespace()
        configuration = dict(req.configuration or {})
        application = client_application(configuration, databricks=versions.is_spark(protocol),
                                         user_agent=self.user_agent)
        session = self.service.open_session(user, protocol, configuration, self.peer,
                                            password=password, authenticated=authenticated, address=self.address,
                                            catalog=namespace.catalogName, database=namespace.schemaName,
                                            client_application=application)
        with self._lock:
            self._sessions.add(session.handle)
        if self._on_session_opened is not None:
            self._on_session_opened()
        resp = T.TOpenSessionResp(serverProtocolVersion=protocol,
                                  sessionHandle=convert.to_tsession_handle(session.handle), configuration={})
        if versions.is_spark(protocol):
            resp.canUseMultipleCatalogs = True  # the connector refuses a catalog otherwise; any name of ours is one
            resp.initialNamespace = T.TNamespace(catalogName=namespace.catalogName or catalogs.current().name,
                                                 schemaName=session.current_database)
        return resp

    @rpc(T.TCloseSessionResp)
    def CloseSession(self, req: T.TCloseSessionReq) -> T.TCloseSessionResp:
        handle = convert.to_session_handle(req.sessionHandle)
        with self._lock:
            self._sessions.discard(handle)
        self.service.close_session(handle)
        return T.TCloseSessionResp()

    @rpc(T.TGetInfoResp)
    def GetInfo(self, req: T.TGetInfoReq) -> T.TGetInfoResp:
        value = self.service.get_info(convert.to_session_handle(req.sessionHandle), convert.to_info_type(req.infoType))
        return T.TGetInfoResp(infoValue=convert.to_tget_info_value(value))

    # -- statements and metadata ---------------------------------------------------------------------------------

    @rpc(T.TExecuteStatementResp)
    def ExecuteStatement(self, req: T.TExecuteStatementReq) -> T.TExecuteStatementResp:
        session_handle = convert.to_session_handle(req.sessionHandle)
        protocol = self.service.sessions.get(session_handle).protocol
        if req.parameters:
            # Unread, they would leave the statement's markers unbound: refused, with the client's way around it.
            raise FeatureNotSupportedError(
                "native query parameters (TSparkParameter) are not supported",
                hint="let the client inline them (databricks-sql-connector: use_inline_params=True) or write the "
                     "values into the statement")
        watching = contextlib.nullcontext() if req.runAsync else self._watching_for_hang_up()
        with watching:
            operation = self.service.execute_statement(
                session_handle, req.statement, dict(req.confOverlay or {}),
                run_async=bool(req.runAsync), timeout=float(req.queryTimeout or 0),
                result_format=convert.to_result_format(req, protocol),
            )
        status = operation.status()
        if not req.runAsync and status.state in (OperationState.ERROR, OperationState.TIMEDOUT,
                                                 OperationState.CANCELED):
            # A synchronous failure is answered on the call itself, and the operation is gone (as in HiveServer2);
            # a client blocked in the call learns of a cancel the same way.
            self.service.close_operation(operation.handle)
            raise status.error or OperationCanceledError("the statement was cancelled")
        return self._started(T.TExecuteStatementResp, operation, req)

    @rpc(T.TGetTypeInfoResp)
    def GetTypeInfo(self, req: T.TGetTypeInfoReq) -> T.TGetTypeInfoResp:
        operation = self.service.get_type_info(convert.to_session_handle(req.sessionHandle))
        return self._started(T.TGetTypeInfoResp, operation, req)

    @rpc(T.TGetCatalogsResp)
    def GetCatalogs(self, req: T.TGetCatalogsReq) -> T.TGetCatalogsResp:
        operation = self.service.get_catalogs(convert.to_session_handle(req.sessionHandle))
        return self._started(T.TGetCatalogsResp, operation, req)

    @rpc(T.TGetSchemasResp)
    def GetSchemas(self, req: T.TGetSchemasReq) -> T.TGetSchemasResp:
        operation = self.service.get_schemas(convert.to_session_handle(req.sessionHandle), req.schemaName)
        return self._started(T.TGetSchemasResp, operation, req)

    @rpc(T.TGetTablesResp)
    def GetTables(self, req: T.TGetTablesReq) -> T.TGetTablesResp:
        operation = self.service.get_tables(convert.to_session_handle(req.sessionHandle), req.schemaName,
                                            req.tableName, list(req.tableTypes) if req.tableTypes else None)
        return self._started(T.TGetTablesResp, operation, req)

    @rpc(T.TGetTableTypesResp)
    def GetTableTypes(self, req: T.TGetTableTypesReq) -> T.TGetTableTypesResp:
        operation = self.service.get_table_types(convert.to_session_handle(req.sessionHandle))
        return self._started(T.TGetTableTypesResp, operation, req)

    @rpc(T.TGetColumnsResp)
    def GetColumns(self, req: T.TGetColumnsReq) -> T.TGetColumnsResp:
        operation = self.service.get_columns(convert.to_session_handle(req.sessionHandle), req.schemaName,
                                             req.tableName, req.columnName)
        return self._started(T.TGetColumnsResp, operation, req)

    @rpc(T.TGetFunctionsResp)
    def GetFunctions(self, req: T.TGetFunctionsReq) -> T.TGetFunctionsResp:
        operation = self.service.get_functions(convert.to_session_handle(req.sessionHandle), req.schemaName,
                                               req.functionName)
        return self._started(T.TGetFunctionsResp, operation, req)

    @rpc(T.TGetPrimaryKeysResp)
    def GetPrimaryKeys(self, req: T.TGetPrimaryKeysReq) -> T.TGetPrimaryKeysResp:
        operation = self.service.get_primary_keys(convert.to_session_handle(req.sessionHandle))
        return self._started(T.TGetPrimaryKeysResp, operation, req)

    @rpc(T.TGetCrossReferenceResp)
    def GetCrossReference(self, req: T.TGetCrossReferenceReq) -> T.TGetCrossReferenceResp:
        operation = self.service.get_cross_reference(convert.to_session_handle(req.sessionHandle))
        return self._started(T.TGetCrossReferenceResp, operation, req)

    def _started(self, response_type: type, operation: Operation, req: Any) -> Any:
        """The response to a request that started an operation, with direct results when the client asked."""
        direct = self._direct_results(operation, getattr(req, "getDirectResults", None))
        return response_type(operationHandle=convert.to_toperation_handle(operation), directResults=direct)

    def _direct_results(self, operation: Operation,
                        wanted: T.TSparkGetDirectResults | None) -> T.TSparkDirectResults | None:
        """Status, metadata and first rows of a statement that ends within the long-poll wait; a result read whole
        is closed here, and the client, told so, sends no CloseOperation."""
        if wanted is None or not versions.is_spark(operation.session.protocol):
            return None
        status = self._status(operation.handle)
        if status.operationState != T.TOperationState.FINISHED_STATE:
            return T.TSparkDirectResults(operationStatus=status)
        metadata = self._metadata(operation)
        if not wanted.maxRows or wanted.maxRows <= 0:  # no rows wanted now: the client fetches them
            return T.TSparkDirectResults(operationStatus=status, resultSetMetadata=metadata)
        results = self._fetch(operation, FetchOrientation.NEXT, wanted.maxRows, wanted.maxBytes or 0)
        closed = None
        if not results.hasMoreRows:
            self.service.close_operation(operation.handle)
            closed = T.TCloseOperationResp(status=convert.OK_STATUS)
        return T.TSparkDirectResults(operationStatus=status, resultSetMetadata=metadata, resultSet=results,
                                     closeOperation=closed)

    # -- operations ----------------------------------------------------------------------------------------------

    @rpc(T.TGetOperationStatusResp)
    def GetOperationStatus(self, req: T.TGetOperationStatusReq) -> T.TGetOperationStatusResp:
        return self._status(convert.to_operation_handle(req.operationHandle), bool(req.getProgressUpdate))

    def _status(self, handle: OperationHandle, progress: bool = False) -> T.TGetOperationStatusResp:
        operation, status = self.service.get_operation_status(handle, self._poll_wait(handle))
        message = sqlstate = code = None
        spark = versions.is_spark(operation.session.protocol)
        if status.error is not None:
            message, sqlstate, code = convert.error_fields(status.error, operation.statement)
            message = convert.with_sqlstate(message, sqlstate) if spark else message
        resp = T.TGetOperationStatusResp(
            status=convert.OK_STATUS,
            operationState=convert.to_toperation_state(status.state), sqlState=sqlstate, errorCode=code,
            errorMessage=message, operationStarted=int(status.started * 1000),
            operationCompleted=int(status.completed * 1000) if status.completed else None,
            hasResultSet=status.has_result_set,
        )
        if progress:  # asked for (beeline's progress display, the shell's line): read from Spark only then
            resp.progressUpdateResponse = convert.to_tprogress_update(self.service.runtime.progress(operation),
                                                                      status.state, status.started)
        if spark:
            resp.displayMessage = message  # what the connector shows first
            resp.numModifiedRows = status.modified_rows  # the connector's cursor.rowcount after DML
        return resp

    def _poll_wait(self, handle: OperationHandle) -> float | None:
        """Databricks clients wait less (`operation.databricks_long_polling_timeout`): their connector holds one lock
        over each poll and knows the operation only once ExecuteStatement answers, so `cursor.cancel()` from another
        thread gets through only between short waits. A Hive session that set `hive.server2.long.polling.timeout`
        (the shell does, for its progress line) waits that long at most."""
        session = self.service.operation(handle).session
        if versions.is_spark(session.protocol):
            return self.service.config.operation.databricks_long_polling_timeout
        wanted = getattr(session, "long_poll", None)  # the session's hive.server2.long.polling.timeout
        if wanted is not None:
            return min(wanted, self.service.config.operation.long_polling_timeout)
        return None

    @rpc(T.TCancelOperationResp)
    def CancelOperation(self, req: T.TCancelOperationReq) -> T.TCancelOperationResp:
        self.service.cancel_operation(convert.to_operation_handle(req.operationHandle))
        return T.TCancelOperationResp()

    @rpc(T.TCloseOperationResp)
    def CloseOperation(self, req: T.TCloseOperationReq) -> T.TCloseOperationResp:
        self.service.close_operation(convert.to_operation_handle(req.operationHandle))
        return T.TCloseOperationResp()

    @rpc(T.TGetResultSetMetadataResp)
    def GetResultSetMetadata(self, req: T.TGetResultSetMetadataReq) -> T.TGetResultSetMetadataResp:
        return self._metadata(self.service.operation(convert.to_operation_handle(req.operationHandle)))

    def _metadata(self, operation: Operation) -> T.TGetResultSetMetadataResp:
        columns = self.service.get_result_set_metadata(operation.handle)
        schema = convert.to_arrow_schema(columns, operation.result_schema()) if self._arrow(operation) else None
        resp = convert.to_tresult_set_metadata(columns, operation.result_format, schema, operation.session.protocol)
        resp.status = convert.OK_STATUS
        return resp

    @staticmethod
    def _arrow(operation: Operation) -> bool:
        """Arrow batches for a statement that asked and has columns; a result without any goes as (no) columns."""
        return operation.result_format.arrow and bool(operation.result_columns())

    @rpc(T.TFetchResultsResp)
    def FetchResults(self, req: T.TFetchResultsReq) -> T.TFetchResultsResp:
        handle = convert.to_operation_handle(req.operationHandle)
        orientation = convert.to_fetch_orientation(req.orientation)
        operation = self.service.operation(handle)
        if req.fetchType == 1:
            lines = self.service.fetch_log(handle, orientation, req.maxRows)
            return T.TFetchResultsResp(hasMoreRows=False,
                                       results=convert.log_to_trowset(lines, operation.session.protocol))
        resp = self._fetch(operation, orientation, req.maxRows, req.maxBytes or 0)
        if req.includeResultSetMetadata and versions.is_spark(operation.session.protocol):
            resp.resultSetMetadata = self._metadata(operation)
        return resp

    def _fetch(self, operation: Operation, orientation: FetchOrientation, max_rows: int,
               max_bytes: int) -> T.TFetchResultsResp:
        if self._arrow(operation):
            schema = convert.to_arrow_schema(operation.result_columns(), operation.result_schema())
            batches = self.service.fetch_batches(operation.handle, orientation, max_rows, max_bytes)
            rowset = convert.to_arrow_rowset(batches, schema, operation.result_format.lz4)
            return T.TFetchResultsResp(status=convert.OK_STATUS, hasMoreRows=batches.has_more, results=rowset)
        block = self.service.fetch_results(operation.handle, orientation, max_rows, max_bytes)
        return T.TFetchResultsResp(status=convert.OK_STATUS, hasMoreRows=block.has_more,
                                   results=convert.to_trowset(block, operation.session.protocol))

    @rpc(generated.TGetLogResp)
    def GetLog(self, req: generated.TGetLogReq) -> generated.TGetLogResp:
        lines = self.service.fetch_log(convert.to_operation_handle(req.operationHandle),
                                       convert.to_fetch_orientation(None), 1_000_000)
        return generated.TGetLogResp(log="\n".join(lines))

    # -- delegation tokens: Kerberos only ------------------------------------------------------------------------

    def _no_tokens(self) -> None:
        raise FeatureNotSupportedError("delegation tokens need Kerberos, which this gateway does not offer")

    @rpc(T.TGetDelegationTokenResp)
    def GetDelegationToken(self, req: T.TGetDelegationTokenReq) -> T.TGetDelegationTokenResp:
        self._no_tokens()
        return T.TGetDelegationTokenResp()

    @rpc(T.TCancelDelegationTokenResp)
    def CancelDelegationToken(self, req: T.TCancelDelegationTokenReq) -> T.TCancelDelegationTokenResp:
        self._no_tokens()
        return T.TCancelDelegationTokenResp()

    @rpc(T.TRenewDelegationTokenResp)
    def RenewDelegationToken(self, req: T.TRenewDelegationTokenReq) -> T.TRenewDelegationTokenResp:
        self._no_tokens()
        return T.TRenewDelegationTokenResp()

