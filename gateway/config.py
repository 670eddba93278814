"""The gateway's configuration: the one place that reads `conf/sluicegate.toml` and any file given with --conf.

Every key has its default and doc line in the packaged `conf/sluicegate.toml`; a user's file overrides keys one by
one. Other packages never read configuration: they are handed the typed settings they need.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from sluicegate.catalog.events import EventRetention
from sluicegate.catalog.history import HistorySettings
from sluicegate.catalog.uris import Location, ObjectLocation, as_location
from sluicegate.dialect.errors import SqlError
from sluicegate.engine.maintenance_settings import MaintenanceSettings
from sluicegate.engine.result_cache import ResultCacheSettings
from sluicegate.engine.spark import SparkSettings
from sluicegate.engine.streams.checkpoint_mirror import CheckpointStore
from sluicegate.engine.streams.settings import StreamSettings
from sluicegate.gateway.errors import ConfigError
from sluicegate.policy import SecuritySettings
from sluicegate.storage.delta.compaction_policy import CompactionPolicy
from sluicegate.storage.masters import is_local, is_loopback, is_loopback_cluster
from sluicegate.storage.settings import ObjectStoreSettings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

AUTH_MODES = ("none", "password", "ldap")


@dataclass(frozen=True)
class ServerSettings:
    host: str
    port: int
    max_connections: int
    shutdown_grace: float
    max_connections_per_address: int = 50
    handshake_timeout: float = 30.0
    max_message_bytes: int = 16 * 1024 * 1024
    max_container_length: int = 100_000
    tls_cert: Path | None = None       # None = no TLS
    tls_key: Path | None = None
    allow_plaintext: bool = False
    http_port: int = -1                # Thrift over HTTP; -1 = off, 0 = a free port
    http_idle_timeout: float = 300.0
    status_port: int = -1              # /health, /ready, /metrics on a port of their own; -1 = on http_port only

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None


@dataclass(frozen=True)
class LdapSettings:
    url: str
    user_dn: str
    start_tls: bool
    ca_file: Path | None
    timeout: float


@dataclass(frozen=True)
class ThrottleSettings:
    max_failures: int
    max_failures_per_address: int
    failure_window: float
    lockout_initial: float
    lockout_max: float


@dataclass(frozen=True)
class AuthSettings:
    mode: str
    password_file: Path
    ldap: LdapSettings | None = None
    token_file: Path | None = None     # None = `tokens` next to password_file
    throttle: ThrottleSettings = ThrottleSettings(5, 20, 300.0, 30.0, 900.0)


@dataclass(frozen=True)
class SessionSettings:
    idle_timeout: float
    check_interval: float
    max_per_user: int = 100


@dataclass(frozen=True)
class OperationSettings:
    idle_timeout: float
    max_fetch_rows: int
    background_threads: int
    long_polling_timeout: float = 5.0
    databricks_long_polling_timeout: float = 0.5


@dataclass(frozen=True)
class MetricsSettings:
    """`GET /metrics` (gateway/metrics.py): whether it is served, and whether a scrape needs the HTTP port's
    credentials (Basic or Bearer), as Trino's /metrics does; Kyuubi's reporter asks none."""

    enabled: bool = True
    require_auth: bool = True
    jvm_timeout: float = 0.5           # seconds a scrape waits for the JVM's heap figures before leaving them out


@dataclass(frozen=True)
class ConsoleSettings:
    """The web console on the HTTP port (gateway/console/)."""

    enabled: bool = True
    session_timeout: float = 1800.0    # seconds a console login may go without a request before it must log in again


@dataclass(frozen=True)
class LogSettings:
    format: str = "text"               # "text" or "json" (gateway/log_format.py)
    statements: bool = True            # one INFO line per statement (gateway/history.py)


@dataclass(frozen=True)
class GatewayConfig:
    server: ServerSettings
    auth: AuthSettings
    session: SessionSettings
    operation: OperationSettings
    include_stack_trace: bool
    warehouse: Location                # a local folder, or an s3:// prefix (catalog/uris.py)
    spark: SparkSettings
    catalog_url: str = ""              # "" = SQLite in WAREHOUSE/catalog.db
    catalog_name: str = "main"         # the catalog's name (dialect/catalogs.py); hive_metastore and spark_catalog too
    streams: StreamSettings | None = None
    security: SecuritySettings | None = None
    events: EventRetention = field(default_factory=EventRetention)
    maintenance: MaintenanceSettings = field(default_factory=MaintenanceSettings)
    source: tuple[str, ...] = field(default=())
    state: Path | None = None          # the local folder of the catalog file, checkpoints and landing; None = warehouse
    object_store: ObjectStoreSettings | None = None   # the store of an s3:// warehouse
    metrics: MetricsSettings = field(default_factory=MetricsSettings)
    console: ConsoleSettings = field(default_factory=ConsoleSettings)
    history: HistorySettings = field(default_factory=HistorySettings)   # the query history (`[history]`)
    log: LogSettings = field(default_factory=LogSettings)           # `[log]`
    result_cache: ResultCacheSettings = field(default_factory=ResultCacheSettings)   # `[result_cache]`

    @property
    def local_state(self) -> Path:
        """Where what cannot live on an object store lives: the warehouse itself when it is a local folder."""
        if self.state is not None:
            return self.state
        assert isinstance(self.warehouse, Path)
        return self.warehouse


def default_password_file() -> Path:
    """Where `sluicegate passwd` and the server look when auth.password_file is "": the user's configuration
    folder (XDG), outside the warehouse that SQL users can reach."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "sluicegate" / "passwd"


def require_secure_transport(server: ServerSettings, auth_mode: str, host: str | None = None) -> None:
    """Passwords and query results must not cross a network in clear text: password or LDAP authentication, or a
    host other machines can reach, needs TLS unless server.allow_plaintext says otherwise."""
    host = server.host if host is None else host
    if server.tls or server.allow_plaintext:
        return
    if auth_mode in ("password", "ldap"):
        raise ConfigError(
            f"auth.mode = \"{auth_mode}\" sends passwords, and the Thrift port has no TLS: set server.tls_cert "
            "and server.tls_key (PEM files), or server.allow_plaintext = true to accept passwords in clear text",
            hint="clients then connect with ssl=true (JDBC) or `sluicegate shell --tls`")
    if not is_loopback(host):
        raise ConfigError(
            f"server.host = \"{host}\" serves other machines, and the Thrift port has no TLS: set server.tls_cert and "
            "server.tls_key (PEM files), bind to 127.0.0.1, or set server.allow_plaintext = true")


def _optional_path(value: str, base: Path | None) -> Path | None:
    """"" = unset; a relative path is read against the configuration file's folder."""
    if not value:
        return None
    path = Path(value).expanduser()
    return path if path.is_absolute() or base is None else base / path


def _positive(raw: dict[str, Any], section: str, *keys: str) -> None:
    for key in keys:
        if raw[section][key] <= 0:
            raise ConfigError(f"{section}.{key} must be positive, got {raw[section][key]}")


def default_config_text() -> str:
    return resources.files("sluicegate.conf").joinpath("sluicegate.toml").read_text(encoding="utf-8")


def _merge(base: dict[str, Any], override: dict[str, Any], where: str) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if key not in base:
            known = ", ".join(sorted(base))
            raise ConfigError(f"unknown configuration key '{where}{key}'; known keys here: {known}")
        if isinstance(base[key], dict) and key != "conf":
            if not isinstance(value, dict):
                raise ConfigError(f"configuration key '{where}{key}' must be a table")
            merged[key] = _merge(base[key], value, f"{where}{key}.")
        elif isinstance(base[key], dict):
            merged[key] = {**base[key], **value}
        else:
            if type(value) is not type(base[key]) and not (isinstance(base[key], float) and isinstance(value, int)):
                raise ConfigError(
                    f"configuration key '{where}{key}' must be {type(base[key]).__name__}, got {value!r}"
                )
            merged[key] = value
    return merged


def load_config(
    path: str | Path | None = None,
    *,
    host: str | None = None,
    port: int | None = None,
    http_port: int | None = None,
    warehouse: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
) -> GatewayConfig:
    """Defaults, then the file at `path`, then `overrides` (a nested dict), then the command-line values."""
    raw = tomllib.loads(default_config_text())
    sources = ["<defaults>"]
    base: Path | None = None
    if path is not None:
        base = Path(path).expanduser().resolve().parent
        try:
            user = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"configuration file {path} does not exist") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"configuration file {path} is not valid TOML: {exc}") from exc
        raw = _merge(raw, user, "")
        sources.append(str(path))
    if overrides:
        raw = _merge(raw, overrides, "")
    if host is not None:
        raw["server"]["host"] = host
    if port is not None:
        raw["server"]["port"] = port
    if http_port is not None:
        raw["server"]["http_port"] = http_port
    if warehouse is not None:
        raw["warehouse"]["path"] = str(warehouse)

    if raw["auth"]["mode"] not in AUTH_MODES:
        raise ConfigError(f"auth.mode must be one of {', '.join(AUTH_MODES)}, got {raw['auth']['mode']!r}")
    if not 0 <= raw["server"]["port"] <= 65535:
        raise ConfigError(f"server.port must be between 0 and 65535, got {raw['server']['port']}")
    if not -1 <= raw["server"]["http_port"] <= 65535:
        raise ConfigError(f"server.http_port must be -1 (off) or between 0 and 65535, got {raw['server']['http_port']}")
    if not -1 <= raw["server"]["status_port"] <= 65535:
        raise ConfigError("server.status_port must be -1 (off) or between 0 and 65535, "
                          f"got {raw['server']['status_port']}")
    _positive(raw, "metrics", "jvm_timeout")
    _positive(raw, "server", "handshake_timeout", "max_message_bytes", "max_container_length", "http_idle_timeout")
    _positive(raw, "auth", "max_failures", "max_failures_per_address", "failure_window", "lockout_initial",
              "lockout_max", "ldap_timeout")
    _positive(raw, "streams", "max_attempts", "tick_interval", "first_update_timeout")
    _positive(raw, "console", "session_timeout")
    server, auth = raw["server"], raw["auth"]
    tls_cert, tls_key = _optional_path(server["tls_cert"], base), _optional_path(server["tls_key"], base)
    if (tls_cert is None) != (tls_key is None):
        raise ConfigError("server.tls_cert and server.tls_key go together: set both (PEM files) or neither")
    ldap = None
    if auth["mode"] == "ldap":
        if not auth["ldap_url"].startswith(("ldap://", "ldaps://")):
            raise ConfigError('auth.mode = "ldap" needs auth.ldap_url = "ldap://HOST:389" or "ldaps://HOST:636", '
                              f"got {auth['ldap_url']!r}")
        if auth["ldap_user_dn"].count("{user}") != 1:
            raise ConfigError("auth.ldap_user_dn must contain {user} once, e.g. "
                              f"\"uid={{user}},ou=people,dc=example,dc=org\"; got {auth['ldap_user_dn']!r}")
        ldap = LdapSettings(url=auth["ldap_url"], user_dn=auth["ldap_user_dn"], start_tls=auth["ldap_start_tls"],
                            ca_file=_optional_path(auth["ldap_ca_file"], base), timeout=float(auth["ldap_timeout"]))
    warehouse_path, state = _warehouse(raw["warehouse"], base)
    object_store = _object_store(raw["storage"], base) if isinstance(warehouse_path, ObjectLocation) else None
    local = state or warehouse_path
    assert isinstance(local, Path)
    password_file = _optional_path(auth["password_file"], base) or default_password_file()
    token_file = _optional_path(auth["token_file"], base) or password_file.with_name("tokens")
    checkpoints = Path(raw["streams"]["checkpoints"]).expanduser().resolve() if raw["streams"]["checkpoints"] \
        else local / "_checkpoints"
    spark = raw["spark"]
    _check_cluster(spark)
    return GatewayConfig(
        server=ServerSettings(
            host=raw["server"]["host"],
            port=raw["server"]["port"],
            max_connections=raw["server"]["max_connections"],
            shutdown_grace=float(raw["server"]["shutdown_grace"]),
            max_connections_per_address=server["max_connections_per_address"],
            handshake_timeout=float(server["handshake_timeout"]),
            max_message_bytes=server["max_message_bytes"],
            max_container_length=server["max_container_length"],
            tls_cert=tls_cert,
            tls_key=tls_key,
            allow_plaintext=server["allow_plaintext"],
            http_port=server["http_port"],
            http_idle_timeout=float(server["http_idle_timeout"]),
            status_port=server["status_port"],
        ),
        auth=AuthSettings(
            mode=auth["mode"],
            password_file=password_file,
            ldap=ldap,
            token_file=token_file,
            throttle=ThrottleSettings(
                max_failures=auth["max_failures"],
                max_failures_per_address=auth["max_failures_per_address"],
                failure_window=float(auth["failure_window"]),
                lockout_initial=float(auth["lockout_initial"]),
                lockout_max=float(auth["lockout_max"]),
            ),
        ),
        session=SessionSettings(
            idle_timeout=float(raw["session"]["idle_timeout"]),
            check_interval=float(raw["session"]["check_interval"]),
            max_per_user=raw["session"]["max_per_user"],
        ),
        operation=OperationSettings(
            idle_timeout=float(raw["operation"]["idle_timeout"]),
            max_fetch_rows=raw["operation"]["max_fetch_rows"],
            background_threads=raw["operation"]["background_threads"],
            long_polling_timeout=float(raw["operation"]["long_polling_timeout"]),
            databricks_long_polling_timeout=float(raw["operation"]["databricks_long_polling_timeout"]),
        ),
        include_stack_trace=raw["errors"]["include_stack_trace"],
        warehouse=warehouse_path,
        spark=SparkSettings(
            master=spark["master"],
            driver_memory=spark["driver_memory"],
            shuffle_partitions=spark["shuffle_partitions"],
            bind_loopback=spark["bind_loopback"],
            warehouse=local,
            extra_conf=dict(spark["conf"]),
            include_stack_trace=raw["errors"]["include_stack_trace"],
            driver_host=spark["driver_host"],
            verify_shared_storage=spark["verify_shared_storage"],
        ),
        catalog_url=raw["catalog"]["url"],
        catalog_name=_catalog_name(raw["catalog"]["name"]),
        streams=StreamSettings(
            trigger_seconds=float(raw["streams"]["trigger_interval"]),
            retry_initial=float(raw["streams"]["retry_initial"]),
            retry_max=float(raw["streams"]["retry_max"]),
            checkpoints=checkpoints,
            static_check_interval=float(raw["streams"]["static_check_interval"]),
            max_attempts=int(raw["streams"]["max_attempts"]),
            tick_seconds=float(raw["streams"]["tick_interval"]),
            create_waits=raw["streams"]["create_waits_for_first_update"],
            first_update_timeout=float(raw["streams"]["first_update_timeout"]),
            checkpoint_store=CheckpointStore(str(warehouse_path / "_checkpoints"))
            if isinstance(warehouse_path, ObjectLocation) else None,
        ),
        security=_security(raw["security"], local, (local, checkpoints, password_file, token_file),
                           warehouse_path if isinstance(warehouse_path, ObjectLocation) else None),
        events=_events(raw["events"]),
        maintenance=_maintenance(raw["compaction"]),
        metrics=MetricsSettings(enabled=raw["metrics"]["enabled"], require_auth=raw["metrics"]["require_auth"],
                                jvm_timeout=float(raw["metrics"]["jvm_timeout"])),
        history=_history(raw["history"]),
        log=_log(raw["log"]),
        result_cache=_result_cache(raw["result_cache"]),
        source=tuple(sources),
        state=state,
        object_store=object_store,
        console=ConsoleSettings(enabled=bool(raw["console"]["enabled"]),
                                session_timeout=float(raw["console"]["session_timeout"])),
    )


def _check_cluster(spark: dict[str, Any]) -> None:
    """A master on other machines needs a driver they can reach and, unless the operator says otherwise, Spark's
    authentication on the driver's ports (they accept code to run)."""
    master, driver_host = spark["master"], spark["driver_host"]
    if spark["bind_loopback"] and driver_host and not is_loopback(driver_host):
        raise ConfigError(f'spark.driver_host = "{driver_host}" needs spark.bind_loopback = false')
    if is_local(master) or is_loopback_cluster(master):
        return
    if spark["bind_loopback"]:
        raise ConfigError(
            f'spark.master = "{master}" runs executors on other machines, and spark.bind_loopback = true binds the '
            "driver to 127.0.0.1 where they cannot reach it: set spark.bind_loopback = false and spark.driver_host "
            "to this machine's address on the cluster's network")
    if not driver_host:
        raise ConfigError(f'spark.master = "{master}" needs spark.driver_host: the address of this machine that '
                          "the cluster's executors connect back to")
    conf = {key: str(value) for key, value in spark["conf"].items()}
    # YARN and Kubernetes make the secret per application themselves; a standalone cluster shares one
    needs_secret = master.startswith("spark://") and not conf.get("spark.authenticate.secret")
    if spark["require_authentication"] and (conf.get("spark.authenticate", "").lower() != "true" or needs_secret):
        raise ConfigError(
            f'spark.master = "{master}": the driver\'s ports accept work from any machine that reaches them; set '
            '"spark.authenticate" = "true" and "spark.authenticate.secret" in [spark.conf] (and on the cluster), '
            '"spark.network.crypto.enabled" = "true" to encrypt, or spark.require_authentication = false')


def _warehouse(raw: dict[str, Any], base: Path | None) -> tuple[Location, Path | None]:
    """The warehouse's location and, for one on an object store, the local state folder."""
    text = raw["path"]
    if "://" not in text:
        return Path(text).expanduser().resolve(), None
    try:
        location = as_location(text)
    except SqlError as exc:
        raise ConfigError(f"warehouse.path: {exc.message}") from exc
    if not isinstance(location, ObjectLocation):
        raise ConfigError(f"warehouse.path must be a folder or an s3://bucket/prefix URI, got {text!r}")
    if not location.segments:
        raise ConfigError(f"warehouse.path {text!r} names a whole bucket: give it a prefix (s3://bucket/warehouse)")
    state = _optional_path(raw["local_state"], base)
    if state is None:
        raise ConfigError("warehouse.local_state must name a local folder when warehouse.path is an object store")
    return location, state.resolve()


def _object_store(raw: dict[str, Any], base: Path | None) -> ObjectStoreSettings:
    """[storage]: the endpoint and keys of the warehouse's store. A secret key file must be readable by its owner
    only, as the password file; no message ever shows the key."""
    endpoint = raw["endpoint"]
    if endpoint and not endpoint.startswith(("http://", "https://")):
        raise ConfigError(f"storage.endpoint must start with http:// or https://, got {endpoint!r}")
    if endpoint.startswith("http://") and not raw["allow_http"]:
        raise ConfigError("storage.endpoint is plain http: set storage.allow_http = true to accept it")
    if raw["conditional_put"] not in ("etag", ""):
        raise ConfigError(f'storage.conditional_put must be "etag" or "", got {raw["conditional_put"]!r}')
    secret = raw["secret_key"]
    secret_file = _optional_path(raw["secret_key_file"], base)
    if secret_file is not None:
        try:
            mode = secret_file.stat().st_mode & 0o777
            if mode & 0o077:
                raise ConfigError(f"storage.secret_key_file {secret_file} has mode {mode:04o}: group or others may "
                                  f"read the store's secret key; run `chmod 600 {secret_file}`")
            secret = secret_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"storage.secret_key_file {secret_file} cannot be read: {exc.strerror}") from None
    if bool(raw["access_key"]) != bool(secret):
        raise ConfigError("storage.access_key and the secret key go together: set both or neither")
    return ObjectStoreSettings(endpoint=endpoint, region=raw["region"], access_key=raw["access_key"],
                               secret_key=secret, allow_http=raw["allow_http"],
                               conditional_put=raw["conditional_put"])


def _catalog_name(name: Any) -> str:
    from sluicegate.dialect.catalogs import checked_name

    try:
        return checked_name(str(name))
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def _maintenance(raw: dict[str, Any]) -> MaintenanceSettings:
    _positive({"compaction": raw}, "compaction", "target_file_size", "small_file_size", "cpu_share")
    if raw["fan_in"] < 2:
        raise ConfigError(f"compaction.fan_in must be 2 or more (files merged into one), got {raw['fan_in']}")
    if raw["cpu_share"] > 1:
        raise ConfigError(f"compaction.cpu_share is a share of one core, at most 1, got {raw['cpu_share']}")
    for key in ("delay", "settle", "retention_interval"):
        if raw[key] < 0:
            raise ConfigError(f"compaction.{key} must be 0 or more seconds, got {raw[key]}")
    policy = CompactionPolicy(target_size=int(raw["target_file_size"]), fan_in=int(raw["fan_in"]),
                              base_size=int(raw["small_file_size"]))
    return MaintenanceSettings(enabled=bool(raw["enabled"]), policy=policy, delay=float(raw["delay"]),
                               cpu_share=float(raw["cpu_share"]), settle=float(raw["settle"]),
                               retention_interval=float(raw["retention_interval"]))


def _events(raw: dict[str, Any]) -> EventRetention:
    days, rows = raw["retention_days"], raw["max_rows_per_table"]
    if not isinstance(days, (int, float)) or days < 0 or not isinstance(rows, int) or rows < 0:
        raise ConfigError(f"events.retention_days and events.max_rows_per_table must be 0 or more (0 = no bound), got "
                          f"{days!r} and {rows!r}")
    return EventRetention(days=float(days), max_rows_per_table=rows)


def _history(raw: dict[str, Any]) -> HistorySettings:
    days, rows = raw["max_age_days"], raw["max_rows"]
    if days < 0 or rows < 0:
        raise ConfigError(f"history.max_age_days and history.max_rows must be 0 or more (0 = no bound), got "
                          f"{days!r} and {rows!r}")
    return HistorySettings(enabled=raw["enabled"], keep_text_whole=raw["keep_text_whole"], max_age_days=float(days),
                           max_rows=rows)


def _result_cache(raw: dict[str, Any]) -> ResultCacheSettings:
    most, largest = raw["max_bytes"], raw["max_entry_bytes"]
    if not isinstance(most, int) or not isinstance(largest, int) or most < 0 or largest < 0:
        raise ConfigError(f"result_cache.max_bytes and result_cache.max_entry_bytes must be whole numbers of bytes, "
                          f"0 or more, got {most!r} and {largest!r}")
    return ResultCacheSettings(enabled=bool(raw["enabled"]) and most > 0 and largest > 0, max_bytes=most,
                               max_entry_bytes=largest)


def _log(raw: dict[str, Any]) -> LogSettings:
    if raw["format"] not in ("text", "json"):
        raise ConfigError(f'log.format must be "text" or "json", got {raw["format"]!r}')
    return LogSettings(format=raw["format"], statements=raw["statements"])


def _security(raw: dict[str, Any], warehouse: Path, protected: tuple[Path, ...],
              object_warehouse: ObjectLocation | None = None) -> SecuritySettings:
    """With the warehouse on an object store, its `landing` prefix is a default root too, and the whole warehouse
    prefix is protected (users read files there only under a root inside it)."""
    roots = raw["allowed_paths"] or [str(warehouse / "landing")] + (
        [str(object_warehouse / "landing")] if object_warehouse is not None else [])
    allowed: list[Location] = []
    for root in roots:
        if isinstance(root, str) and root.lower().startswith("s3://"):
            try:
                allowed.append(as_location(root))
            except SqlError as exc:
                raise ConfigError(f"security.allowed_paths: {exc.message}") from exc
        elif not isinstance(root, str) or not Path(root).expanduser().is_absolute():
            raise ConfigError(f"security.allowed_paths must list absolute folders or s3:// prefixes, got {root!r}")
        else:
            allowed.append(Path(root).expanduser())
    admins = raw["admins"]
    if not all(isinstance(a, str) and a for a in admins):
        raise ConfigError(f"security.admins must list user names, got {admins!r}")
    servers = raw["kafka_servers"]
    if not isinstance(servers, list) or not all(isinstance(s, str) and s.strip() for s in servers):
        raise ConfigError(f"security.kafka_servers must list hosts (host, host:port or \"*\"), got {servers!r}")
    guarded: tuple[Location, ...] = protected + ((object_warehouse,) if object_warehouse is not None else ())
    return SecuritySettings(allowed_paths=tuple(allowed), protected_paths=guarded,
                            admins=frozenset(admins), admin_unrestricted=raw["admin_unrestricted"],
                            kafka_servers=tuple(s.strip() for s in servers))
