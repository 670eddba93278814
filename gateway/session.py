"""Client sessions: each has its own Spark session (own temp views, current database and SQL conf) on the shared
Spark context, and the operations it started. Idle sessions are closed by a sweeper; closing a session cancels its
running work."""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import TYPE_CHECKING

from sluicegate.engine.sessions import CurrentDatabase, new_user_session
from sluicegate.executor.binding.session_views import SessionViews
from sluicegate.executor.spark_databases import spark_has_database
from sluicegate.gateway.errors import InvalidRequestError, LimitExceededError, SessionNotFoundError
from sluicegate.gateway.handles import SessionHandle
from sluicegate.gateway.operation.state import TERMINAL
from sluicegate.policy.settings import is_client_hint

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sluicegate.gateway.operation.base import Operation
    from sluicegate.gateway.operation.manager import OperationManager
    from sluicegate.policy import Policy, Principal

log = logging.getLogger(__name__)


class Session:
    def __init__(self, handle: SessionHandle, user: str, protocol: int, spark: SparkSession, client: str,
                 client_application: str | None = None) -> None:
        """`client`: the peer, `host:port`; `client_application`: the application's name as the client gave it
        (gateway/client_application.py)."""
        self.handle = handle
        self.user = user
        self.protocol = protocol
        self.spark = spark
        self.client = client
        self.client_application = client_application
        self.created = time.time()
        self.last_access = time.monotonic()
        self._operations: dict[bytes, Operation] = {}
        self._lock = threading.Lock()
        self.views = SessionViews()  # temporary views defined by a query, bound afresh by each statement
        self.long_poll: float | None = None  # the client's own hive.server2.long.polling.timeout, in seconds
        self.database = CurrentDatabase(spark)  # its current database, read without a round trip

    def touch(self) -> None:
        self.last_access = time.monotonic()

    def track(self, operation: Operation) -> None:
        with self._lock:
            self._operations[operation.handle.guid] = operation

    def forget(self, operation: Operation) -> None:
        with self._lock:
            self._operations.pop(operation.handle.guid, None)

    def operations(self) -> list[Operation]:
        with self._lock:
            return list(self._operations.values())

    def busy(self) -> bool:
        return any(op.state not in TERMINAL for op in self.operations())

    @property
    def current_database(self) -> str:
        return self.database.get()


class SessionManager:
    def __init__(self, spark: SparkSession, operations: OperationManager, idle_timeout: float,
                 policy: Policy, max_per_user: int = 0) -> None:
        """`max_per_user`: sessions one user may hold at once (0 = no cap); each costs a Spark session."""
        self._spark = spark
        self._policy = policy
        self._operations = operations
        self._idle_timeout = idle_timeout
        self._max_per_user = max_per_user
        self._sessions: dict[bytes, Session] = {}
        self._lock = threading.Lock()

    def _check_cap(self, user: str) -> None:
        """Under self._lock."""
        if self._max_per_user and sum(s.user == user for s in self._sessions.values()) >= self._max_per_user:
            log.warning("refusing a session for %s: %d sessions are open (session.max_per_user)", user,
                        self._max_per_user)
            raise LimitExceededError(
                f"user '{user}' already has {self._max_per_user} open sessions, the most allowed",
                error_class="TOO_MANY_SESSIONS",
                hint="close sessions you no longer use (idle ones close after session.idle_timeout)")

    def open(self, user: str, protocol: int, configuration: dict[str, str], client: str = "",
             initial_schema: str | None = None, client_application: str | None = None) -> Session:
        """`initial_schema`: Databricks' initialNamespace schema, current when it exists (see `_use_initial_schema`)."""
        with self._lock:
            self._check_cap(user)
        session = Session(SessionHandle.new(), user, protocol, new_user_session(self._spark), client,
                          client_application)
        _apply_session_configuration(session, configuration, self._policy)
        if initial_schema:
            _use_initial_schema(session, initial_schema)
        with self._lock:
            self._check_cap(user)  # checked again: another connection of the user may have won the race
            self._sessions[session.handle.guid] = session
        log.info("session %s opened for %s from %s (protocol V%d, %s)", session.handle.hex, user, client, protocol + 1,
                 client_application or "no application name")
        return session

    def get(self, handle: SessionHandle) -> Session:
        with self._lock:
            session = self._sessions.get(handle.guid)
        if session is None or session.handle.secret != handle.secret:
            raise SessionNotFoundError(
                f"session {handle.hex} does not exist: it was closed or timed out; open a new session"
            )
        session.touch()
        return session

    def close(self, handle: SessionHandle) -> None:
        with self._lock:
            session = self._sessions.pop(handle.guid, None)
        if session is None:
            raise SessionNotFoundError(f"session {handle.hex} does not exist or is already closed")
        self._close(session)

    def _close(self, session: Session) -> None:
        for operation in session.operations():
            operation.close()
            self._operations.remove(operation.handle)
        log.info("session %s of %s closed", session.handle.hex, session.user)

    def close_quietly(self, handle: SessionHandle) -> None:
        """For a dropped connection: its sessions go with it (as HiveServer2's close-on-disconnect)."""
        with self._lock:
            session = self._sessions.pop(handle.guid, None)
        if session is not None:
            self._close(session)

    def close_idle(self) -> int:
        if self._idle_timeout <= 0:
            return 0
        now = time.monotonic()
        with self._lock:
            idle = [s for s in self._sessions.values() if now - s.last_access > self._idle_timeout and not s.busy()]
            for session in idle:
                self._sessions.pop(session.handle.guid, None)
        for session in idle:
            log.info("closing session %s of %s: idle for %.0f s", session.handle.hex, session.user,
                     now - session.last_access)
            self._close(session)
        return len(idle)

    def close_all(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            self._close(session)

    def count(self) -> int:
        with self._lock:
            return len(self._sessions)

    def list(self) -> list[Session]:
        with self._lock:
            return list(self._sessions.values())


def _apply_session_configuration(session: Session, configuration: dict[str, str], policy: Policy) -> None:
    """OpenSession's overlay: `use:database`, `set:hiveconf:KEY` and `set:hivevar:KEY`, as HiveServer2 reads them.
    Each setting passes the policy, as a SET would; one it refuses fails the OpenSession with the reason."""
    principal = policy.principal(session.user)
    for key, value in configuration.items():
        if key.startswith("set:hiveconf:"):
            _set_conf(session, key[len("set:hiveconf:"):], value, policy, principal)
        elif key.startswith("set:hivevar:"):
            # Spark resolves ${hivevar:x} from the conf key `x` (its `SET hivevar:x=...` stores it so, too).
            _set_conf(session, "hivevar:" + key[len("set:hivevar:"):], value, policy, principal)
        elif key.startswith(("spark.", "hive.")):
            _set_conf(session, key, value, policy, principal)
    database = configuration.get("use:database")
    if database and database != "default":
        if not spark_has_database(session.spark, database):
            raise InvalidRequestError(
                f"database '{database}' does not exist; connect to an existing one (SHOW DATABASES lists them)",
                error_class="SCHEMA_NOT_FOUND",
                sqlstate="42704",
            )
        session.database.use(database)


def _use_initial_schema(session: Session, schema: str) -> None:
    """Databricks' `initialNamespace` schema becomes current if it exists; a missing one is not an error, as on
    Databricks: dbt-databricks opens its first sessions with the profile's schema before it creates that schema (a
    statement that names nothing else then finds no table, or Spark's `default`)."""
    if schema.lower() == "default":
        return
    if spark_has_database(session.spark, schema):
        session.database.use(schema)
    else:
        log.info("session %s: the initial schema %r does not exist (yet); the session starts in default",
                 session.handle.hex, schema)


LONG_POLL_KEY = "hive.server2.long.polling.timeout"
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*", re.IGNORECASE)


def _long_poll_seconds(value: str) -> float | None:
    """Hive's `hive.server2.long.polling.timeout` (`1000ms`, `1s`; a bare number is milliseconds) in seconds."""
    found = _DURATION.fullmatch(value)
    if found is None:
        return None
    number = float(found.group(1))
    return number if (found.group(2) or "ms").lower() == "s" else number / 1000


def _set_conf(session: Session, key: str, value: str, policy: Policy, principal: Principal) -> None:
    if key.lower() == LONG_POLL_KEY:
        # a client's wish to be answered sooner (the shell's progress line); never longer than the server's wait
        session.long_poll = _long_poll_seconds(value)
        return
    if is_client_hint(key):
        log.debug("session %s: %s=%s is a client hint, not a setting", session.handle.hex, key, value)
        return
    policy.check_setting(key, principal)
    if key.startswith("hivevar:"):
        key = key[len("hivevar:"):]
    try:
        session.spark.conf.set(key, value)
    except Exception as exc:
        raise InvalidRequestError(f"the setting {key}={value} was refused by Spark: {exc}",
                                  error_class="INVALID_CONF_VALUE", sqlstate="22023") from exc
