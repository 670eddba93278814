"""GatewayService: what the gateway does, in domain types only (as Flink's SqlGatewayService).

The Thrift handler is one of its callers; tests and the future HTTP transport can be others. It owns the Spark
session, the session and operation registries and the sweeper that closes idle ones.
"""

from __future__ import annotations

import logging
import threading
import time
from enum import Enum
from typing import TYPE_CHECKING, Any

from sluicegate.dialect import catalogs
from sluicegate.engine.maintenance import TableMaintenance
from sluicegate.engine.result_cache import ResultCache
from sluicegate.engine.results import ResultColumn
from sluicegate.gateway.auth.providers import Authenticator
from sluicegate.gateway.auth.throttle import LoginThrottle
from sluicegate.gateway.config import GatewayConfig
from sluicegate.gateway.errors import AuthenticationError, ConfigError, InvalidRequestError
from sluicegate.gateway.handles import OperationHandle, SessionHandle
from sluicegate.gateway.metrics import GatewayMetrics
from sluicegate.gateway.operation import metadata
from sluicegate.gateway.operation.base import (
    COLUMNS,
    ArrowBlock,
    FetchOrientation,
    Operation,
    OperationStatus,
    ResultFormat,
    RowBlock,
)
from sluicegate.gateway.operation.execute_statement import ExecuteStatement
from sluicegate.gateway.operation.manager import OperationManager
from sluicegate.gateway.runtime import GatewayRuntime
from sluicegate.gateway.session import Session, SessionManager
from sluicegate.policy import Policy

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluicegate.catalog.store import CatalogStore
    from sluicegate.engine.streams.manager import StreamManager
    from sluicegate.executor.materialized_views.scheduler import MaterializedViewScheduler
    from sluicegate.executor.system_work import SystemWork

log = logging.getLogger(__name__)

SERVER_NAME = "sluicegate"


def open_catalog(config: GatewayConfig) -> CatalogStore:
    """The catalog database the configuration names (`catalog.url`), else the SQLite file in the warehouse."""
    from sluicegate.catalog.store import CatalogStore

    if config.catalog_url:
        return CatalogStore(config.catalog_url, config.events)
    return CatalogStore.for_warehouse(config.local_state, config.events)


def open_storage(config: GatewayConfig) -> None:
    """An object-store warehouse: its prefix is served with the configured endpoint and keys (storage/), once
    the store answers a listing of it with them (a wrong endpoint, key or bucket stops the start, not a statement)."""
    if config.object_store is None:
        return
    from sluicegate.storage.errors import ObjectStoreUnavailableError
    from sluicegate.storage.files import prefix_exists
    from sluicegate.storage.registry import register

    register(str(config.warehouse), config.object_store)
    try:
        prefix_exists(config.warehouse)
    except ObjectStoreUnavailableError as exc:
        raise ConfigError(f"warehouse.path {config.warehouse}: {exc.message}", hint=exc.hint) from exc


def _shadow_databases(spark: SparkSession, catalog: CatalogStore | None) -> None:
    """Spark's in-memory session catalog learns the persistent databases, so `USE db` and a connection's
    `use:database` work after a restart. A row the gateway would refuse today (left by an older release, or
    written by hand) is skipped with a warning: one bad row must not keep the gateway from starting."""
    from sluicegate.catalog.names import name_problem, quote_identifier

    for database in catalog.list_databases() if catalog is not None else ():
        problem = name_problem(database.name, "database")
        if problem is not None:
            log.warning("skipping the catalog's database %r: %s; DROP DATABASE it (CASCADE) or remove the row from "
                        "the catalog database", database.name, problem)
            continue
        quoted = quote_identifier(database.name)
        try:
            if not spark.catalog.databaseExists(quoted):
                spark.sql(f"CREATE DATABASE IF NOT EXISTS {quoted}")
        except Exception as exc:  # noqa: BLE001 - one database Spark refuses must not stop the boot
            log.warning("Spark refused the catalog's database %r, skipped: %s", database.name, exc)


def start_streams(config: GatewayConfig, spark: SparkSession, catalog: CatalogStore) -> StreamManager:
    """The stream manager, with every stream that was running when the gateway last stopped resumed."""
    from sluicegate.engine.streams.manager import StreamManager

    assert config.streams is not None
    manager = StreamManager(spark, catalog, config.streams, warehouse=config.warehouse)
    resumed = manager.restart_all()
    if resumed:
        log.info("resumed %d streams from their checkpoints", resumed)
    return manager


def start_view_scheduler(config: GatewayConfig, spark: SparkSession, catalog: CatalogStore,
                         policy: Policy) -> MaterializedViewScheduler:
    """The loop that refreshes scheduled and TRIGGER ON UPDATE materialized views, ticking as the supervisor does."""
    from sluicegate.executor.materialized_views.scheduler import MaterializedViewScheduler

    assert config.streams is not None
    return MaterializedViewScheduler(spark, catalog, config.warehouse, policy, config.streams.tick_seconds,
                                     input_check_seconds=config.streams.static_check_interval).start()


def check_catalog(name: str | None) -> None:
    """A catalog a client names must be the gateway's one catalog (under any of its names): dialect/catalogs.py."""
    if name:
        catalogs.check_catalog(name)


class InfoType(Enum):
    SERVER_NAME = "SERVER_NAME"
    DBMS_NAME = "DBMS_NAME"
    DBMS_VERSION = "DBMS_VERSION"
    MAX_IDENTIFIER_LENGTH = "MAX_IDENTIFIER_LENGTH"
    MAX_COLUMN_NAME_LENGTH = "MAX_COLUMN_NAME_LENGTH"
    MAX_TABLE_NAME_LENGTH = "MAX_TABLE_NAME_LENGTH"
    MAX_SCHEMA_NAME_LENGTH = "MAX_SCHEMA_NAME_LENGTH"
    IDENTIFIER_QUOTE_CHAR = "IDENTIFIER_QUOTE_CHAR"
    SEARCH_PATTERN_ESCAPE = "SEARCH_PATTERN_ESCAPE"
    OTHER = "OTHER"


class GatewayService:
    def __init__(self, config: GatewayConfig, spark: SparkSession, authenticator: Authenticator,
                 catalog: CatalogStore | None = None, streams: StreamManager | None = None) -> None:
        """`catalog`: the persistent catalog (opened from the configuration when not given). `streams`: the stream
        manager to share (gateways of one process over one warehouse); without it the service starts its own and
        resumes every stream of the catalog, and stops them on shutdown."""
        self.config = config
        self.spark = spark
        catalogs.configure(config.catalog_name)
        open_storage(config)
        self.catalog = catalog if catalog is not None else open_catalog(config)
        _shadow_databases(spark, self.catalog)
        self._owns_streams = streams is None
        self.streams = streams if streams is not None else start_streams(config, spark, self.catalog)
        self.streams_restored = True   # start_streams resumed them (a shared manager: its owner did); for /ready
        self.authenticator = authenticator
        self.operations = OperationManager(config.operation.background_threads, config.operation.idle_timeout)
        self.metrics = GatewayMetrics(config.metrics.jvm_timeout)   # gateway/metrics.py: this gateway's registry
        self.operations.observers.add(self.metrics.observer)
        assert config.security is not None
        self.policy = Policy(config.security, self.catalog)
        # the owner of the streams also refreshes materialized views on their schedules (one per warehouse)
        self.views = start_view_scheduler(config, spark, self.catalog, self.policy) if self._owns_streams else None
        # ... and compacts the tables they write (engine/maintenance.py)
        self.maintenance = TableMaintenance(self.catalog, config.maintenance).start() if self._owns_streams else None
        landing = config.local_state / "landing"
        if landing in config.security.allowed_paths:
            landing.mkdir(exist_ok=True)  # the default root users land files in: the warehouse's own folder
        self.sessions = SessionManager(spark, self.operations, config.session.idle_timeout, self.policy,
                                       config.session.max_per_user)
        self.runtime = GatewayRuntime(self.sessions)  # system.runtime's sessions and queries, kill_query
        self.system_work: SystemWork | None = None    # the query history's recorder of the gateway's own work (app.py)
        # the exact result cache (engine/result_cache.py, executor/result_cache.py); None when `[result_cache]` is off
        self.result_cache = ResultCache(config.result_cache) if config.result_cache.enabled else None
        self.throttle = LoginThrottle(config.auth.throttle)
        self._stopping = threading.Event()
        self._sweeper = threading.Thread(target=self._sweep, name="sluicegate-sweeper", daemon=True)
        self._sweeper.start()
        self.metrics.watch(self)

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    # -- sessions ------------------------------------------------------------------------------------------------

    def authenticate(self, user: str, password: str | None, address: str = "") -> None:
        """Check a login, refusing at once while the user or the client address is locked out after failures."""
        self.throttle.check(user, address)
        try:
            self.authenticator.authenticate(user, password)
        except AuthenticationError as exc:
            if exc.error_class != "AUTHENTICATION_UNAVAILABLE":  # the server's fault is not a guess
                self.throttle.failed(user, address)
            log.info("login of %r from %s refused: %s", user, address or "?", exc.message)
            raise
        self.throttle.succeeded(user)

    def open_session(
        self, user: str, protocol: int, configuration: dict[str, str], client: str = "",
        password: str | None = None, authenticated: bool = False, address: str = "",
        catalog: str | None = None, database: str | None = None, client_application: str | None = None,
    ) -> Session:
        """`authenticated`: the transport (SASL PLAIN) already checked the password. `address`: the client's IP.
        `catalog`, `database`: the session's initial namespace (Databricks' `initialNamespace`); the database
        becomes current when it exists (dbt-databricks names it before creating it). `client_application`: the
        application's name (gateway/client_application.py)."""
        if not authenticated:
            self.authenticate(user, password, address)
        check_catalog(catalog)
        session = self.sessions.open(user, protocol, configuration, client, initial_schema=database,
                                     client_application=client_application)
        self.metrics.session_opened()
        return session

    def close_session(self, handle: SessionHandle) -> None:
        self.sessions.close(handle)

    def get_info(self, handle: SessionHandle, info: InfoType) -> str | int:
        self.sessions.get(handle)
        values: dict[InfoType, str | int] = {
            InfoType.SERVER_NAME: SERVER_NAME,
            InfoType.DBMS_NAME: "Spark SQL",
            InfoType.DBMS_VERSION: self.spark.version,
            InfoType.MAX_IDENTIFIER_LENGTH: 128,
            InfoType.MAX_COLUMN_NAME_LENGTH: 128,
            InfoType.MAX_TABLE_NAME_LENGTH: 128,
            InfoType.MAX_SCHEMA_NAME_LENGTH: 128,
            InfoType.IDENTIFIER_QUOTE_CHAR: "`",
            InfoType.SEARCH_PATTERN_ESCAPE: "\\",
        }
        if info not in values:
            raise InvalidRequestError(f"GetInfo does not know the info type {info.value}")
        return values[info]

    # -- operations ----------------------------------------------------------------------------------------------

    def execute_statement(
        self, handle: SessionHandle, statement: str, conf_overlay: dict[str, str] | None = None,
        run_async: bool = False, timeout: float | None = None, result_format: ResultFormat = COLUMNS,
    ) -> Operation:
        """`result_format`: how the client reads the result (HiveServer2 columns or Arrow batches)."""
        session = self.sessions.get(handle)
        if not statement or not statement.strip():
            raise InvalidRequestError("the statement is empty", error_class="EMPTY_STATEMENT", sqlstate="42601")
        operation = ExecuteStatement(session, statement, conf_overlay or {}, self.config.include_stack_trace,
                                     self.catalog, self.config.warehouse, self.policy, self.streams,
                                     result_format=result_format, runtime=self.runtime,
                                     system_work=self.system_work, result_cache=self.result_cache)
        session.track(operation)
        self.operations.run(operation, run_async, timeout)
        return operation

    def _metadata(self, kind: type[metadata.MetadataOperation], handle: SessionHandle, **request: Any) -> Operation:
        session = self.sessions.get(handle)
        operation = kind(session, catalog=self.catalog, policy=self.policy, **request)
        session.track(operation)
        self.operations.run(operation, run_async=False, timeout=None)
        return operation

    def get_catalogs(self, handle: SessionHandle) -> Operation:
        return self._metadata(metadata.GetCatalogs, handle)

    def get_schemas(self, handle: SessionHandle, schema_name: str | None) -> Operation:
        return self._metadata(metadata.GetSchemas, handle, schema_name=schema_name)

    def get_tables(self, handle: SessionHandle, schema_name: str | None, table_name: str | None,
                   table_types: list[str] | None) -> Operation:
        return self._metadata(metadata.GetTables, handle, schema_name=schema_name, table_name=table_name,
                              table_types=table_types)

    def get_table_types(self, handle: SessionHandle) -> Operation:
        return self._metadata(metadata.GetTableTypes, handle)

    def get_columns(self, handle: SessionHandle, schema_name: str | None, table_name: str | None,
                    column_name: str | None) -> Operation:
        return self._metadata(metadata.GetColumns, handle, schema_name=schema_name, table_name=table_name,
                              column_name=column_name)

    def get_type_info(self, handle: SessionHandle) -> Operation:
        return self._metadata(metadata.GetTypeInfo, handle)

    def get_functions(self, handle: SessionHandle, schema_name: str | None, function_name: str | None) -> Operation:
        return self._metadata(metadata.GetFunctions, handle, schema_name=schema_name, function_name=function_name)

    def get_primary_keys(self, handle: SessionHandle) -> Operation:
        return self._metadata(metadata.GetPrimaryKeys, handle)

    def get_cross_reference(self, handle: SessionHandle) -> Operation:
        return self._metadata(metadata.GetCrossReference, handle)

    def operation(self, handle: OperationHandle) -> Operation:
        operation = self.operations.get(handle)
        operation.session.touch()
        return operation

    def get_operation_status(self, handle: OperationHandle,
                             wait: float | None = None) -> tuple[Operation, OperationStatus]:
        """Long-polls: a running operation is waited on up to `wait` seconds (`operation.long_polling_timeout` by
        default), so the answer comes the moment it ends instead of after the client's next poll interval."""
        operation = self.operation(handle)
        operation.wait(self.config.operation.long_polling_timeout if wait is None else wait)
        return operation, operation.status()

    def get_result_set_metadata(self, handle: OperationHandle) -> list[ResultColumn]:
        return self.operation(handle).result_columns()

    def fetch_results(self, handle: OperationHandle, orientation: FetchOrientation, max_rows: int,
                      max_bytes: int = 0) -> RowBlock:
        """The next rows as columns: at most `max_rows` (and `operation.max_fetch_rows`), and about `max_bytes` of
        data when it is positive (at least one row)."""
        block = self.operation(handle).fetch(orientation, self._row_bound(max_rows), max(max_bytes, 0))
        self.metrics.fetched(block.num_rows, sum(array.nbytes for array in block.arrays) if block.num_rows else 0)
        return block

    def fetch_batches(self, handle: OperationHandle, orientation: FetchOrientation, max_rows: int,
                      max_bytes: int = 0) -> ArrowBlock:
        """As `fetch_results`, as the Arrow batches the result was produced in."""
        block = self.operation(handle).fetch_batches(orientation, self._row_bound(max_rows), max(max_bytes, 0))
        self.metrics.fetched(block.num_rows, sum(batch.nbytes for batch in block.batches))
        return block

    def _row_bound(self, max_rows: int) -> int:
        if max_rows <= 0:
            raise InvalidRequestError(f"maxRows must be positive, got {max_rows}")
        return min(max_rows, self.config.operation.max_fetch_rows)

    def fetch_log(self, handle: OperationHandle, orientation: FetchOrientation, max_rows: int) -> list[str]:
        return self.operation(handle).log.fetch(orientation, max(max_rows, 1))

    def cancel_operation(self, handle: OperationHandle) -> None:
        self.operation(handle).cancel()

    def close_operation(self, handle: OperationHandle) -> None:
        self.operations.close(handle)

    # -- lifecycle -----------------------------------------------------------------------------------------------

    def _sweep(self) -> None:
        interval = max(self.config.session.check_interval, 0.05)
        while not self._stopping.wait(interval):
            try:
                self.sessions.close_idle()
                self.operations.close_idle()
            except Exception:
                log.exception("closing idle sessions failed")

    def shutdown(self, grace: float) -> None:
        """Let running statements finish for up to `grace` seconds, then cancel the rest and close every session."""
        self._stopping.set()
        deadline = time.monotonic() + grace
        while self.operations_running() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.sessions.close_all()
        self.operations.shutdown()
        if self.views is not None:
            self.views.stop()
        if self._owns_streams:  # REFRESH ... ASYNC still running: within the grace (an unfinished one commits nothing)
            from sluicegate.executor.materialized_views.background import REFRESHES

            REFRESHES.wait(max(0.0, deadline - time.monotonic()))
            self.streams.stop_all()
        if self.maintenance is not None:
            self.maintenance.close()

    def operations_running(self) -> int:
        return sum(1 for s in self.sessions.list() for op in s.operations() if op.state.value in ("PENDING", "RUNNING"))

