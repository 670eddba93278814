"""A gateway put together: what `sluicegate serve`, the tests' fixtures and the benchmarks start, in one place so
that a gateway started in a test is wired as the one an operator starts (same checks, same order, same stop)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sluicegate.engine.spark import create_spark_session, warm_up
from sluicegate.gateway.auth.providers import Authenticator, make_authenticator
from sluicegate.gateway.config import GatewayConfig, require_secure_transport
from sluicegate.gateway.history import HistoryRecorder, record_restored_streams, start_recorder
from sluicegate.gateway.log_format import use_format
from sluicegate.gateway.server import GatewayServer
from sluicegate.gateway.service import GatewayService
from sluicegate.gateway.tls import server_context

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluicegate.catalog.store import CatalogStore
    from sluicegate.engine.streams.manager import StreamManager


@dataclass
class RunningGateway:
    """A started gateway: its configuration, service (which holds the Spark session and the catalog) and server."""

    config: GatewayConfig
    service: GatewayService
    server: GatewayServer
    history: HistoryRecorder | None = None   # the query history's recorder and the statement log (gateway/history.py)

    @property
    def host(self) -> str:
        return self.server.host

    @property
    def port(self) -> int:
        return self.server.port

    def stop(self, grace: float) -> None:
        """Close the ports and the sessions (waiting up to `grace` seconds for running statements), then the catalog;
        the Spark session is the caller's: it may serve other gateways."""
        self.server.shutdown(grace)
        if self.history is not None:
            self.service.operations.observers.remove(self.history)
            self.history.stop()   # what the closing sessions recorded, written before the catalog closes
        if self.service.catalog is not None:
            self.service.catalog.close()


def check(config: GatewayConfig) -> Authenticator:
    """The settings that can be wrong, checked before Spark starts (that takes a minute): plaintext on a host other
    machines reach, a TLS certificate or key that does not load, a login configuration that does not hold. Returns
    the authenticator the configuration names."""
    require_secure_transport(config.server, config.auth.mode)
    if config.server.tls_cert is not None and config.server.tls_key is not None:
        server_context(config.server.tls_cert, config.server.tls_key)
    return authenticator_of(config)


def authenticator_of(config: GatewayConfig) -> Authenticator:
    return make_authenticator(config.auth.mode, config.auth.password_file, config.auth.ldap)


def start_spark(config: GatewayConfig) -> SparkSession:
    """The process's Spark session for `config`, warmed up: a fresh JVM runs its first query 2-3x slower."""
    spark = create_spark_session(config.spark)
    warm_up(spark)
    return spark


def start(config: GatewayConfig, spark: SparkSession, *, authenticator: Authenticator | None = None,
          catalog: CatalogStore | None = None, streams: StreamManager | None = None, host: str | None = None,
          port: int | None = None) -> RunningGateway:
    """A gateway service on `spark` and its server, listening. `catalog`: opened from the configuration when not
    given; `streams`: a stream manager to share (the service starts its own without); `host`, `port`: instead of the
    configuration's (tests and benchmarks: 127.0.0.1, 0)."""
    use_format(config.log.format)
    began = time.time()
    service = GatewayService(config, spark, authenticator or authenticator_of(config), catalog, streams)
    recorder = start_recorder(service.catalog, config.history, config.log.statements)
    if recorder is not None:
        service.operations.observers.add(recorder)
        service.system_work = recorder   # refreshes the gateway runs on its own are recorded as user `system`'s
        if service.views is not None:
            service.views.system_work = recorder
        if streams is None:   # this gateway resumed the warehouse's streams: the history says so
            record_restored_streams(recorder, service.catalog, began, time.time())
    server = GatewayServer(service, config.server.host if host is None else host,
                           config.server.port if port is None else port, config.server.max_connections)
    server.start()
    return RunningGateway(config, service, server, recorder)
