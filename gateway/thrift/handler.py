"""The TCLIService handler: one thin method per RPC (Thrift's names), domain calls in between conversions.

One handler serves one connection: it knows the SASL user of that connection and the sessions opened on it, which
are closed when the connection drops. The `rpc` decorator turns every exception into the response's TStatus, so
nothing ever escapes into the Thrift library and a failed request never ends the connection.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from TCLIService import ttypes as T

from gateway.errors import FeatureNotSupportedError, OperationCanceledError
from gateway.operation.state import OperationState
from gateway.service import GatewayService
from gateway.handles import SessionHandle
from gateway.thrift import convert

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
                return response_type(status=convert.to_tstatus(exc, self.statement_of(req)))

        return call  # type: ignore[return-value]

    return wrap


class TCLIServiceHandler:
    def __init__(self, service: GatewayService, peer: str, sasl_user: str | None, sasl_password: str | None,
                 hung_up: Callable[[float], bool] | None = None, *, address: str = "",
                 refusal: Exception | None = None, on_session_opened: Callable[[], None] | None = None) -> None:
        """`hung_up(timeout)` waits up to `timeout` seconds and tells whether the client closed its connection.
        `address`: the client's IP (login throttling). `refusal`: the error every OpenSession gets (a connection
        over a cap). `on_session_opened`: told after each successful OpenSession (ends the handshake timeout)."""
        self.service = service
        self.peer = peer
        self.address = address
        self._refusal = refusal
        self._on_session_opened = on_session_opened
        self.sasl_user = sasl_user
        self.sasl_password = sasl_password
        self._hung_up = hung_up
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
    def OpenSession(self, req: T.TOpenSessionReq) -> T.TOpenSessionResp:  # noqa: N802
        if self._refusal is not None:
            raise self._refusal
        protocol = min(req.client_protocol, convert.SERVER_PROTOCOL)
        if self.sasl_user is not None:
            user, authenticated, password = self.sasl_user, True, self.sasl_password
        else:
            user, authenticated, password = req.username or "anonymous", False, req.password
        session = self.service.open_session(user, protocol, dict(req.configuration or {}), self.peer,
                                            password=password, authenticated=authenticated, address=self.address)
        with self._lock:
            self._sessions.add(session.handle)
        if self._on_session_opened is not None:
            self._on_session_opened()
        return T.TOpenSessionResp(serverProtocolVersion=protocol,
                                  sessionHandle=convert.to_tsession_handle(session.handle), configuration={})

    @rpc(T.TCloseSessionResp)
    def CloseSession(self, req: T.TCloseSessionReq) -> T.TCloseSessionResp:  # noqa: N802
        handle = convert.to_session_handle(req.sessionHandle)
        with self._lock:
            self._sessions.discard(handle)
        self.service.close_session(handle)
        return T.TCloseSessionResp()

    @rpc(T.TGetInfoResp)
    def GetInfo(self, req: T.TGetInfoReq) -> T.TGetInfoResp:  # noqa: N802
        value = self.service.get_info(convert.to_session_handle(req.sessionHandle), convert.to_info_type(req.infoType))
        return T.TGetInfoResp(infoValue=convert.to_tget_info_value(value))

    # -- statements and metadata ---------------------------------------------------------------------------------

    @rpc(T.TExecuteStatementResp)
    def ExecuteStatement(self, req: T.TExecuteStatementReq) -> T.TExecuteStatementResp:  # noqa: N802
        watching = contextlib.nullcontext() if req.runAsync else self._watching_for_hang_up()
        with watching:
            operation = self.service.execute_statement(
                convert.to_session_handle(req.sessionHandle), req.statement, dict(req.confOverlay or {}),
                run_async=bool(req.runAsync), timeout=float(req.queryTimeout or 0),
            )
        status = operation.status()
        if not req.runAsync and status.state in (OperationState.ERROR, OperationState.TIMEDOUT,
                                                 OperationState.CANCELED):
            # A synchronous failure is answered on the call itself, and the operation is gone (as in HiveServer2);
            # a client blocked in the call learns of a cancel the same way.
            self.service.close_operation(operation.handle)
            raise status.error or OperationCanceledError("the statement was cancelled")
        return T.TExecuteStatementResp(operationHandle=convert.to_toperation_handle(operation))

    @rpc(T.TGetTypeInfoResp)
    def GetTypeInfo(self, req: T.TGetTypeInfoReq) -> T.TGetTypeInfoResp:  # noqa: N802
        operation = self.service.get_type_info(convert.to_session_handle(req.sessionHandle))
        return T.TGetTypeInfoResp(operationHandle=convert.to_toperation_handle(operation))

    @rpc(T.TGetCatalogsResp)
    def GetCatalogs(self, req: T.TGetCatalogsReq) -> T.TGetCatalogsResp:  # noqa: N802
        operation = self.service.get_catalogs(convert.to_session_handle(req.sessionHandle))
        return T.TGetCatalogsResp(operationHandle=convert.to_toperation_handle(operation))

    @rpc(T.TGetSchemasResp)
    def GetSchemas(self, req: T.TGetSchemasReq) -> T.TGetSchemasResp:  # noqa: N802
        operation = self.service.get_schemas(convert.to_session_handle(req.sessionHandle), req.schemaName)
        return T.TGetSchemasResp(operationHandle=convert.to_toperation_handle(operation))

    @rpc(T.TGetTablesResp)
    def GetTables(self, req: T.TGetTablesReq) -> T.TGetTablesResp:  # noqa: N802
        operation = self.service.get_tables(convert.to_session_handle(req.sessionHandle), req.schemaName,
                                            req.tableName, list(req.tableTypes) if req.tableTypes else None)
        return T.TGetTablesResp(operationHandle=convert.to_toperation_handle(operation))

    @rpc(T.TGetTableTypesResp)
    def GetTableTypes(self, req: T.TGetTableTypesReq) -> T.TGetTableTypesResp:  # noqa: N802
        operation = self.service.get_table_types(convert.to_session_handle(req.sessionHandle))
        return T.TGetTableTypesResp(operationHandle=convert.to_toperation_handle(operation))

    @rpc(T.TGetColumnsResp)
    def GetColumns(self, req: T.TGetColumnsReq) -> T.TGetColumnsResp:  # noqa: N802
        operation = self.service.get_columns(convert.to_session_handle(req.sessionHandle), req.schemaName,
                                             req.tableName, req.columnName)
        return T.TGetColumnsResp(operationHandle=convert.to_toperation_handle(operation))

    @rpc(T.TGetFunctionsResp)
    def GetFunctions(self, req: T.TGetFunctionsReq) -> T.TGetFunctionsResp:  # noqa: N802
        operation = self.service.get_functions(convert.to_session_handle(req.sessionHandle), req.schemaName,
                                               req.functionName)
        return T.TGetFunctionsResp(operationHandle=convert.to_toperation_handle(operation))

    @rpc(T.TGetPrimaryKeysResp)
    def GetPrimaryKeys(self, req: T.TGetPrimaryKeysReq) -> T.TGetPrimaryKeysResp:  # noqa: N802
        operation = self.service.get_primary_keys(convert.to_session_handle(req.sessionHandle))
        return T.TGetPrimaryKeysResp(operationHandle=convert.to_toperation_handle(operation))

    @rpc(T.TGetCrossReferenceResp)
    def GetCrossReference(self, req: T.TGetCrossReferenceReq) -> T.TGetCrossReferenceResp:  # noqa: N802
        operation = self.service.get_cross_reference(convert.to_session_handle(req.sessionHandle))
        return T.TGetCrossReferenceResp(operationHandle=convert.to_toperation_handle(operation))

    # -- operations ----------------------------------------------------------------------------------------------

    @rpc(T.TGetOperationStatusResp)
    def GetOperationStatus(self, req: T.TGetOperationStatusReq) -> T.TGetOperationStatusResp:  # noqa: N802
        operation, status = self.service.get_operation_status(convert.to_operation_handle(req.operationHandle))
        message = sqlstate = code = None
        if status.error is not None:
            message, sqlstate, code = convert.error_fields(status.error, operation.statement)
        return T.TGetOperationStatusResp(
            operationState=convert.to_toperation_state(status.state), sqlState=sqlstate, errorCode=code,
            errorMessage=message, operationStarted=int(status.started * 1000),
            operationCompleted=int(status.completed * 1000) if status.completed else None,
            hasResultSet=status.has_result_set,
        )

    @rpc(T.TCancelOperationResp)
    def CancelOperation(self, req: T.TCancelOperationReq) -> T.TCancelOperationResp:  # noqa: N802
        self.service.cancel_operation(convert.to_operation_handle(req.operationHandle))
        return T.TCancelOperationResp()

    @rpc(T.TCloseOperationResp)
    def CloseOperation(self, req: T.TCloseOperationReq) -> T.TCloseOperationResp:  # noqa: N802
        self.service.close_operation(convert.to_operation_handle(req.operationHandle))
        return T.TCloseOperationResp()

    @rpc(T.TGetResultSetMetadataResp)
    def GetResultSetMetadata(self, req: T.TGetResultSetMetadataReq) -> T.TGetResultSetMetadataResp:  # noqa: N802
        columns = self.service.get_result_set_metadata(convert.to_operation_handle(req.operationHandle))
        return T.TGetResultSetMetadataResp(schema=convert.to_ttable_schema(columns))

    @rpc(T.TFetchResultsResp)
    def FetchResults(self, req: T.TFetchResultsReq) -> T.TFetchResultsResp:  # noqa: N802
        handle = convert.to_operation_handle(req.operationHandle)
        orientation = convert.to_fetch_orientation(req.orientation)
        protocol = self.service.operation(handle).session.protocol
        if req.fetchType == 1:
            lines = self.service.fetch_log(handle, orientation, req.maxRows)
            return T.TFetchResultsResp(hasMoreRows=False, results=convert.log_to_trowset(lines, protocol))
        block = self.service.fetch_results(handle, orientation, req.maxRows)
        return T.TFetchResultsResp(hasMoreRows=block.has_more, results=convert.to_trowset(block, protocol))

    @rpc(T.TGetLogResp)
    def GetLog(self, req: T.TGetLogReq) -> T.TGetLogResp:  # noqa: N802
        lines = self.service.fetch_log(convert.to_operation_handle(req.operationHandle),
                                       convert.to_fetch_orientation(None), 1_000_000)
        return T.TGetLogResp(log="\n".join(lines))

    # -- delegation tokens: Kerberos only ------------------------------------------------------------------------

    def _no_tokens(self) -> None:
        raise FeatureNotSupportedError("delegation tokens need Kerberos, which this gateway does not offer")

    @rpc(T.TGetDelegationTokenResp)
    def GetDelegationToken(self, req: T.TGetDelegationTokenReq) -> T.TGetDelegationTokenResp:  # noqa: N802
        self._no_tokens()
        return T.TGetDelegationTokenResp()

    @rpc(T.TCancelDelegationTokenResp)
    def CancelDelegationToken(self, req: T.TCancelDelegationTokenReq) -> T.TCancelDelegationTokenResp:  # noqa: N802
        self._no_tokens()
        return T.TCancelDelegationTokenResp()

    @rpc(T.TRenewDelegationTokenResp)
    def RenewDelegationToken(self, req: T.TRenewDelegationTokenReq) -> T.TRenewDelegationTokenResp:  # noqa: N802
        self._no_tokens()
        return T.TRenewDelegationTokenResp()

